import MatchHostCore

/// The browser client the web port serves at `/`: Four in a Row against anyone on the server
/// (a quick match through the matchmaker, or a private game by invite code), played over the
/// native protocol on the port's WebSocket, in one page with no other file to fetch.
///
/// Its script is a whole native client, written from PROTOCOL.md: framing, HELLO and device
/// login (the device id and a secret it chose kept in `localStorage`, so a reload is the same
/// player and finds its game again through MATCH_RESUMED), numbered reliable messages with
/// acknowledgements, PING and PONG, and RESUME after a dropped connection, resending what the
/// server had not acknowledged.
///
/// Query parameters: `join=CODE` joins that private game once signed in; `player=NAME` keeps
/// a separate identity (two players in one browser); `bot=1` plays by itself (join or quick
/// match, then the first open column from the middle out), which the tests use.
enum WebClientPage {
    /// The page, naming `gameID` in its HELLO.
    static func html(gameID: String) -> String {
        Self.template.replacing("\"__GAME_ID__\"", with: jsonStringLiteral(gameID))
    }

    private static let template = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Four in a Row · MatchHost</title>
        <style>
        body { font-family: system-ui, sans-serif; margin: 1.5rem auto; max-width: 34rem; padding: 0 1rem; color: #222; }
        header { display: flex; align-items: baseline; gap: 1rem; flex-wrap: wrap; }
        h1 { font-size: 1.4rem; margin: 0; }
        #connection { font-size: .85rem; padding: .1rem .5rem; border-radius: .6rem; background: #eee; }
        #connection.connected { background: #d8f3dc; }
        #connection.reconnecting, #connection.connecting { background: #fff3bf; }
        #connection.closed { background: #ffd6d6; }
        #menu { display: flex; gap: .5rem; flex-wrap: wrap; margin: 1rem 0; }
        button { font-size: 1rem; padding: .4rem .9rem; }
        input { font-size: 1rem; padding: .35rem; width: 7rem; text-transform: uppercase; }
        #board { border-collapse: separate; border-spacing: 4px; background: #1d4ed8; border-radius: 8px; margin: 1rem 0; }
        #board td { width: 2.6rem; height: 2.6rem; border-radius: 50%; background: #f8fafc; cursor: pointer; }
        #board td.seat0 { background: #ef4444; }
        #board td.seat1 { background: #facc15; }
        #board td.line { box-shadow: 0 0 0 4px #16a34a inset; }
        #board.waiting td { cursor: default; }
        #status { min-height: 1.4rem; font-weight: 600; }
        #invite code { font-size: 1.2rem; }
        .you { font-weight: 600; }
        </style>
        </head>
        <body>
        <header><h1>Four in a Row</h1><span id="connection" class="connecting">connecting</span><span id="player"></span></header>
        <section id="menu">
          <button id="quick" disabled>Quick match</button>
          <button id="create" disabled>Play a friend</button>
          <form id="joinForm"><input id="code" maxlength="8" placeholder="invite code" autocomplete="off"> <button id="join" disabled>Join</button></form>
        </section>
        <p id="invite" hidden>Invite code <code id="inviteCode"></code>: your friend enters it, or opens <a id="inviteLink"></a></p>
        <p id="status">Signing in…</p>
        <p id="note"></p>
        <table id="board" class="waiting" data-phase="none"></table>
        <p id="players"></p>
        <script>
        "use strict";
        const GAME_ID = "__GAME_ID__";
        const params = new URLSearchParams(location.search);
        const BOT = params.has("bot");
        const slot = params.get("player") || "";

        // ---- Bytes: the native field types, big-endian.
        class Writer {
          constructor() { this.bytes = []; }
          u8(v) { this.bytes.push(v & 255); return this; }
          u16(v) { return this.u8(v >>> 8).u8(v); }
          u32(v) { return this.u16(v >>> 16).u16(v & 65535); }
          u64(v) { v = BigInt(v); return this.u32(Number(v >> 32n)).u32(Number(v & 0xffffffffn)); }
          raw(b) { for (const x of b) this.bytes.push(x); return this; }
          str(s) { const b = new TextEncoder().encode(s); return this.u16(b.length).raw(b); }
          data(b) { return this.u32(b.length).raw(b); }
          done() { return Uint8Array.from(this.bytes); }
        }
        class Reader {
          constructor(b) { this.b = b; this.v = new DataView(b.buffer, b.byteOffset, b.byteLength); this.i = 0; }
          need(n) { if (this.i + n > this.b.length) throw new Error("truncated message"); }
          u8() { this.need(1); return this.b[this.i++]; }
          u16() { this.need(2); const r = this.v.getUint16(this.i); this.i += 2; return r; }
          u32() { this.need(4); const r = this.v.getUint32(this.i); this.i += 4; return r; }
          u64() { this.need(8); const r = this.v.getBigUint64(this.i); this.i += 8; return r; }
          data() { const n = this.u32(); this.need(n); const r = this.b.subarray(this.i, this.i + n); this.i += n; return r; }
          str() { const n = this.u16(); this.need(n); const r = new TextDecoder().decode(this.b.subarray(this.i, this.i + n)); this.i += n; return r; }
        }
        const hex = (n) => Array.from(crypto.getRandomValues(new Uint8Array(n)), (x) => x.toString(16).padStart(2, "0")).join("");

        // ---- The native protocol (PROTOCOL.md): frames and messages.
        const F = { HELLO: 1, WELCOME: 2, AUTHENTICATE: 3, AUTHENTICATED: 4, RESUME: 5, RESUMED: 6, ERROR: 7, PING: 8, PONG: 9,
                    ACK: 10, RELIABLE: 11, UNRELIABLE: 12, GOODBYE: 13 };
        const M = { REQUEST: 0x20, MATCH_INPUT: 0x22, RESPONSE: 0x40, REQUEST_ERROR: 0x41, PRESENCE: 0x42, MATCH_ENDED: 0x44,
                    MATCH_EVENT: 0x45, MATCHMAKER_MATCHED: 0x47, TICKET_CANCELLED: 0x49, MATCH_RESUMED: 0x4A };
        const E = { UNSUPPORTED_VERSION: 1, UNKNOWN_GAME: 2, AUTHENTICATION_FAILED: 5, SESSION_NOT_FOUND: 8, RESUME_REFUSED: 9,
                    SESSION_REPLACED: 10, BACKLOG_EXCEEDED: 13, SHUTTING_DOWN: 15 };

        class NativeConnection {
          constructor(events) {
            this.events = events;
            const key = "matchhost.device" + (slot ? "." + slot : "");
            let device = JSON.parse(localStorage.getItem(key) || "null");
            if (!device) {
              // A secret of our own, stored before it is sent: a lost AUTHENTICATED costs nothing.
              device = { id: "web-" + hex(16), secret: hex(32) };
              localStorage.setItem(key, JSON.stringify(device));
            }
            this.device = device;
            this.session = null;           // { playerId, sessionId, resumeToken }
            this.sent = 0;                 // our last RELIABLE sequence number
            this.outbox = [];              // [sequence, message] not yet acknowledged
            this.received = 0;             // the server's last RELIABLE sequence number we handled
            this.acknowledged = 0;         // the last of those we told the server
            this.ackTimer = null;
            this.requests = new Map();
            this.nextRequest = 1;
            this.retry = 0;
            this.ended = false;
            this.open();
          }

          open() {
            this.inbound = new Uint8Array(0);
            this.established = false;
            const scheme = location.protocol === "https:" ? "wss:" : "ws:";
            const ws = new WebSocket(scheme + "//" + location.host + "/native");
            ws.binaryType = "arraybuffer";
            this.ws = ws;
            ws.onopen = () => this.send(new Writer().u8(F.HELLO).u16(1).str(GAME_ID).done());
            ws.onmessage = (event) => { if (ws === this.ws) this.receive(new Uint8Array(event.data)); };
            ws.onclose = () => { if (ws === this.ws) this.dropped(); };
          }

          send(body) {
            const frame = new Writer().u32(body.length).raw(body).done();
            if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(frame);
          }

          /// Gives up on this socket now: a browser may take a minute to report a dead link
          /// closed, longer than the session's grace, so the next one does not wait for that.
          abandon() {
            const ws = this.ws;
            if (!ws) return;
            this.ws = null;
            ws.close();
            this.dropped();
          }

          receive(bytes) {
            const joined = new Uint8Array(this.inbound.length + bytes.length);
            joined.set(this.inbound); joined.set(bytes, this.inbound.length);
            let at = 0;
            const view = new DataView(joined.buffer);
            try {
              while (this.ws && joined.length - at >= 4) {
                const length = view.getUint32(at);
                if (joined.length - at - 4 < length) break;
                this.frame(new Reader(joined.subarray(at + 4, at + 4 + length)));
                at += 4 + length;
              }
            } catch (error) {
              console.error("MatchHost: bad frame from the server", error);
              return this.abandon();
            }
            this.inbound = joined.slice(at);
            this.lastHeard = Date.now();
          }

          frame(r) {
            switch (r.u8()) {
              case F.WELCOME: {
                r.u16(); r.u32(); this.idleTimeout = r.u32();
                if (this.session) {
                  this.send(new Writer().u8(F.RESUME).str(this.session.sessionId).str(this.session.resumeToken).u64(this.received).done());
                } else {
                  this.send(new Writer().u8(F.AUTHENTICATE).u8(1).str(this.device.id).str(this.device.secret).done());
                }
                break;
              }
              case F.AUTHENTICATED: {
                const playerId = r.str(); r.str(); r.str(); r.u64();
                this.session = { playerId, sessionId: r.str(), resumeToken: r.str() };
                // A new session numbers from 1; what the last one never got acknowledged is gone.
                this.sent = 0; this.outbox = []; this.received = 0; this.acknowledged = 0;
                this.rejectRequests("the session was restarted");
                this.established = true; this.retry = 0;
                this.events.authenticated(playerId);
                break;
              }
              case F.RESUMED: {
                this.acknowledge(Number(r.u64()));
                this.established = true; this.retry = 0;
                for (const [sequence, message] of this.outbox) this.sendReliable(sequence, message);
                this.events.resumed();
                break;
              }
              case F.ERROR: {
                const code = r.u16(), message = r.str();
                // The session is gone (a restart, the grace ran out): sign in again as the same device.
                if ([E.SESSION_NOT_FOUND, E.RESUME_REFUSED, E.SHUTTING_DOWN, E.BACKLOG_EXCEEDED].includes(code)) this.session = null;
                // Trying again would get the same answer: stop, and say why.
                if ([E.SESSION_REPLACED, E.AUTHENTICATION_FAILED, E.UNKNOWN_GAME, E.UNSUPPORTED_VERSION].includes(code)) this.ended = true;
                this.events.serverError(code, message);
                break;
              }
              case F.PING: this.send(new Writer().u8(F.PONG).u64(r.u64()).done()); break;
              case F.ACK: this.acknowledge(Number(r.u64())); break;
              case F.RELIABLE: {
                const sequence = Number(r.u64());
                this.acknowledge(Number(r.u64()));
                if (sequence <= this.received) break;  // a resend we had already
                if (sequence !== this.received + 1) return this.abandon();
                this.received = sequence;
                this.owe();
                this.message(r);
                break;
              }
              case F.UNRELIABLE: this.message(r); break;
            }
          }

          acknowledge(upTo) { this.outbox = this.outbox.filter(([sequence]) => sequence > upTo); }

          /// An ACK within 200 ms, unless one of our RELIABLE frames carries it first.
          owe() {
            if (this.ackTimer) return;
            this.ackTimer = setTimeout(() => {
              this.ackTimer = null;
              if (this.established && this.received > this.acknowledged) {
                this.acknowledged = this.received;
                this.send(new Writer().u8(F.ACK).u64(this.received).done());
              }
            }, 200);
          }

          sendReliable(sequence, message) {
            this.acknowledged = this.received;
            this.send(new Writer().u8(F.RELIABLE).u64(sequence).u64(this.received).raw(message).done());
          }

          reliable(message) {
            const sequence = ++this.sent;
            this.outbox.push([sequence, message]);
            if (this.established) this.sendReliable(sequence, message);
          }

          /// Callbacks, not a Promise: the answer is handled before the frames read with it (a
          /// STATE right after MATCH_JOINED), as a Promise's reaction would run only after them.
          request(kind, fields, resolve, reject) {
            const id = this.nextRequest++;
            this.requests.set(id, { resolve, reject });
            this.reliable(new Writer().u8(M.REQUEST).u32(id).u8(kind).raw(fields).done());
          }

          rejectRequests(why) {
            for (const { reject } of this.requests.values()) reject(new Error(why));
            this.requests.clear();
          }

          message(r) {
            const type = r.u8();
            if (type === M.RESPONSE || type === M.REQUEST_ERROR) {
              const id = r.u32(), waiting = this.requests.get(id);
              this.requests.delete(id);
              if (!waiting) return;
              if (type === M.RESPONSE) { r.u8(); waiting.resolve(r); }
              else { const code = r.u16(); waiting.reject(Object.assign(new Error(r.str()), { code })); }
            } else {
              this.events.message(type, r);
            }
          }

          dropped() {
            this.established = false;
            if (this.ended) return this.events.closed();
            this.events.reconnecting();
            const delay = Math.min(5000, 250 * 2 ** this.retry++);
            setTimeout(() => this.open(), delay);
          }

          /// Closes a connection that has been silent for the server's idle timeout: it is dead.
          watch() {
            if (this.established && this.idleTimeout && Date.now() - this.lastHeard > this.idleTimeout) this.abandon();
          }
        }

        // ---- Four in a Row (docs/protocol-fourinarow.md).
        const COLUMNS = 7, ROWS = 6;
        const $ = (id) => document.getElementById(id);
        const game = { matchId: null, seat: null, cells: new Array(42).fill(0), phase: "none", toMove: 255,
                       nextMove: 1, turnEnds: 0, players: [], line: [] };
        let me = null, autoJoined = false;

        const board = $("board");
        for (let row = ROWS - 1; row >= 0; row--) {
          const tr = board.insertRow();
          for (let column = 0; column < COLUMNS; column++) {
            const td = tr.insertCell();
            td.dataset.cell = String(row * COLUMNS + column);
            td.addEventListener("click", () => move(column));
          }
        }

        function show() {
          for (const td of board.querySelectorAll("td")) {
            const cell = Number(td.dataset.cell), value = game.cells[cell];
            td.className = (value ? "seat" + (value - 1) : "") + (game.line.includes(cell) ? " line" : "");
          }
          board.className = game.phase === "playing" && game.toMove === game.seat ? "" : "waiting";
          board.dataset.phase = game.phase;
          $("players").textContent = game.players.map(([seat, id]) =>
            (seat === 0 ? "red" : "yellow") + ": " + id.slice(0, 8) + (id === me ? " (you)" : "")).join(" · ");
        }

        function status(text) { $("status").textContent = text; }
        /// What happened just now (a refusal, an error, the other player away), beside the status line.
        function note(text) { $("note").textContent = text; }

        function ticking() {
          if (game.phase !== "playing") return;
          const left = Math.max(0, Math.ceil((game.turnEnds - Date.now()) / 1000));
          status((game.toMove === game.seat ? "Your turn" : "Their turn") + " · " + left + " s");
        }

        function enter(r) {
          game.matchId = r.u64(); r.str(); r.str(); r.u8();
          const count = r.u8();
          for (let i = 0; i < count; i++) { r.str(); r.u8(); }
          const code = r.str();
          Object.assign(game, { seat: null, cells: new Array(42).fill(0), phase: "waiting", toMove: 255, nextMove: 1, players: [], line: [] });
          $("invite").hidden = code === "";
          if (code) {
            const link = location.origin + location.pathname + "?join=" + code;
            $("inviteCode").textContent = code;
            $("inviteLink").textContent = link;
            $("inviteLink").href = link;
          }
          status("Waiting for the other player…");
          show();
        }

        function gameOver(r) {
          const winner = r.u8(), reason = r.u8(), count = r.u8();
          game.line = [];
          for (let i = 0; i < count; i++) game.line.push(r.u8());
          game.phase = "over"; game.toMove = 255;
          const why = ["", "four in a row", "the board is full", "the turn ran out", "a player left"][reason] || "";
          status((winner === 255 ? "Draw" : winner === game.seat ? "You won" : "You lost") + (why ? " (" + why + ")" : ""));
          show();
        }

        function gameEvent(r) {
          switch (r.u8()) {
            case 1: {  // STATE
              const phase = r.u8(), count = r.u8();
              game.players = [];
              for (let i = 0; i < count; i++) { const seat = r.u8(), id = r.str(); game.players.push([seat, id]); if (id === me) game.seat = seat; }
              for (let i = 0; i < 42; i++) game.cells[i] = r.u8();
              game.nextMove = r.u16(); game.toMove = r.u8(); game.turnEnds = Date.now() + r.u32();
              game.line = [];
              game.phase = ["waiting", "playing", "over"][phase] || "waiting";
              if (phase === 2) gameOver(r); else if (phase === 0) status("Waiting for the other player…");
              if (phase === 1) $("invite").hidden = true;
              break;
            }
            case 2: {  // MOVED
              const seat = r.u8(), column = r.u8(), row = r.u8();
              game.cells[row * COLUMNS + column] = seat + 1;
              game.nextMove = r.u16() + 1; game.toMove = r.u8(); game.turnEnds = Date.now() + r.u32();
              break;
            }
            case 3: {  // MOVE_REFUSED
              r.u16();
              const reason = r.u8();
              note("Move refused: " + r.str());
              // Every reason but "not your turn" leaves the turn with this player.
              if (reason !== 1 && game.phase === "playing") game.toMove = game.seat;
              break;
            }
            case 4: gameOver(r); break;  // GAME_OVER
          }
          show(); ticking();
          if (BOT && game.phase === "playing" && game.toMove === game.seat) setTimeout(botMove, 50);
        }

        function botMove() {
          for (const column of [3, 2, 4, 1, 5, 0, 6]) if (game.cells[(ROWS - 1) * COLUMNS + column] === 0) return move(column);
        }

        function move(column) {
          if (game.phase !== "playing" || game.toMove !== game.seat) return;
          const input = new Writer().u8(1).u16(game.nextMove).u8(column).done();
          connection.reliable(new Writer().u8(M.MATCH_INPUT).u64(game.matchId).data(input).done());
          game.toMove = 255;  // until MOVED says whose turn it is
          show();
        }

        function failed(error) { note(error.message); }

        function quickMatch() {
          status("Looking for an opponent…");
          // MATCHMAKE fourinarow, 2 players, no properties or clauses, alone.
          connection.request(8, new Writer().str("fourinarow").u8(2).u8(2).u8(0).u8(0).u8(0).str("").done(), () => {}, failed);
        }

        function joinCode(code) {
          connection.request(7, new Writer().str(code.trim()).done(), (r) => {
            // A reload finds the game through MATCH_RESUMED, not by joining again.
            if (!BOT) history.replaceState(null, "", location.pathname);
            enter(r);
          }, failed);
        }

        $("quick").onclick = quickMatch;
        $("create").onclick = () => connection.request(1, new Writer().str("fourinarow").u8(2).str("").u8(1).done(), enter, failed);
        $("joinForm").onsubmit = (event) => { event.preventDefault(); joinCode($("code").value); };

        function connectionState(name, text) { $("connection").className = name; $("connection").textContent = text; }

        const connection = new NativeConnection({
          authenticated(playerId) {
            me = playerId;
            $("player").innerHTML = "";
            $("player").append("you are ", Object.assign(document.createElement("span"), { className: "you", textContent: playerId.slice(0, 8) }));
            connectionState("connected", "connected");
            for (const id of ["quick", "create", "join"]) $(id).disabled = false;
            if (game.phase === "none") status("Start a quick match, or play a friend.");
            if (!autoJoined) {
              autoJoined = true;
              if (params.get("join")) joinCode(params.get("join"));
              else if (BOT) quickMatch();
            }
          },
          resumed() { connectionState("connected", "connected"); },
          reconnecting() { connectionState("reconnecting", "reconnecting…"); },
          closed() { connectionState("closed", "disconnected"); for (const id of ["quick", "create", "join"]) $(id).disabled = true; },
          serverError(code, message) {
            if (code === E.SESSION_REPLACED) note("This player signed in elsewhere (another tab?); reload to play here.");
            else if (code !== E.SESSION_NOT_FOUND) note(message);
          },
          message(type, r) {
            switch (type) {
              case M.MATCHMAKER_MATCHED: r.str(); note(""); enter(r); break;
              case M.TICKET_CANCELLED: r.str(); if (game.phase === "none" || game.phase === "over") status("Matchmaking stopped: " + r.str()); break;
              case M.MATCH_RESUMED: enter(r); break;
              case M.MATCH_EVENT: if (r.u64() === game.matchId) gameEvent(new Reader(r.data())); break;
              case M.PRESENCE: {
                if (r.u64() !== game.matchId || game.phase !== "playing") break;
                const who = r.str(), change = r.u8();
                if (who !== me && change === 2) note("The other player is away; their turn clock still runs.");
                if (who !== me && change === 3) note("");
                break;
              }
              case M.MATCH_ENDED: {
                if (r.u64() !== game.matchId) break;
                const reason = r.str();
                if (game.phase !== "over") { game.phase = "over"; status("The game ended: " + reason); show(); }
                break;
              }
            }
          },
        });
        setInterval(() => { ticking(); connection.watch(); }, 250);
        </script>
        </body>
        </html>
        """#
}
