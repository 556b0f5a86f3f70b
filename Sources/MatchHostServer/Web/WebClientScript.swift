import MatchHostCore

/// `/matchhost.js`: the native client every game page of the web port runs, written from
/// PROTOCOL.md: framing, HELLO and device login (the device id and a secret it chose kept in
/// `localStorage`, so a reload is the same player and finds its game again through
/// MATCH_RESUMED), numbered reliable messages with acknowledgements, PING and PONG, and RESUME
/// after a dropped connection, resending what the server had not acknowledged. Then what
/// every page shows of it: the connection, the player, and notes and errors.
///
/// Query parameters every page reads: `join=CODE` joins that private game once signed in;
/// `player=NAME` keeps a separate identity (two players in one browser); `bot=1` (Four in a
/// Row) plays by itself, which the tests use.
enum WebClientScript {
    /// The script, naming `gameID` in its HELLO.
    static func javaScript(gameID: String) -> String {
        Self.template.replacing("\"__GAME_ID__\"", with: jsonStringLiteral(gameID))
    }

    private static let template = #"""
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
          f64() { this.need(8); const r = this.v.getFloat64(this.i); this.i += 8; return r; }
          data() { const n = this.u32(); this.need(n); const r = this.b.subarray(this.i, this.i + n); this.i += n; return r; }
          str() { const n = this.u16(); this.need(n); const r = new TextDecoder().decode(this.b.subarray(this.i, this.i + n)); this.i += n; return r; }
        }
        const hex = (n) => Array.from(crypto.getRandomValues(new Uint8Array(n)), (x) => x.toString(16).padStart(2, "0")).join("");

        // ---- The native protocol (PROTOCOL.md): frames and messages.
        const F = { HELLO: 1, WELCOME: 2, AUTHENTICATE: 3, AUTHENTICATED: 4, RESUME: 5, RESUMED: 6, ERROR: 7, PING: 8, PONG: 9,
                    ACK: 10, RELIABLE: 11, UNRELIABLE: 12, GOODBYE: 13 };
        const M = { REQUEST: 0x20, MATCH_INPUT: 0x22, RESPONSE: 0x40, REQUEST_ERROR: 0x41, PRESENCE: 0x42, MATCH_ENDED: 0x44,
                    MATCH_EVENT: 0x45, LOBBY_UPDATE: 0x46, MATCHMAKER_MATCHED: 0x47, TICKET_CANCELLED: 0x49, MATCH_RESUMED: 0x4A };
        /// Request kinds.
        const R = { CREATE_MATCH: 1, JOIN_MATCH: 2, LEAVE_MATCH: 3, SUBSCRIBE_LOBBY: 5, JOIN_BY_CODE: 7, MATCHMAKE: 8, CANCEL_TICKET: 9,
                    GET_PROFILE: 13, GET_LEADERBOARD: 15, SET_ALIAS: 22, GET_ALIASES: 23 };
        /// REQUEST_ERROR codes a page acts on.
        const RE = { NOT_IN_MATCH: 105, NO_SUCH_TICKET: 110, ALIAS_LOCKED: 127 };
        /// PRESENCE changes.
        const P = { JOINED: 1, DISCONNECTED: 2, RECONNECTED: 3, LEFT: 4 };
        const E = { UNSUPPORTED_VERSION: 1, UNKNOWN_GAME: 2, AUTHENTICATION_FAILED: 5, SESSION_NOT_FOUND: 8, RESUME_REFUSED: 9,
                    SESSION_REPLACED: 10, BACKLOG_EXCEEDED: 13, SHUTTING_DOWN: 15, PLAYER_BANNED: 22,
                    DEVICE_UNLINKED: 24, SESSION_REVOKED: 25 };

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
                // The session is gone (a restart, the grace ran out, the operator revoked it): sign in again as the same device.
                if ([E.SESSION_NOT_FOUND, E.RESUME_REFUSED, E.SHUTTING_DOWN, E.BACKLOG_EXCEEDED, E.SESSION_REVOKED].includes(code)) this.session = null;
                // The server is up and answered (after a restart, most often): sign in again at once, not
                // after the back-off its downtime built up. A stopping one is waited for as before.
                if ([E.SESSION_NOT_FOUND, E.RESUME_REFUSED, E.SESSION_REVOKED].includes(code)) this.retry = 0;
                // Trying again would get the same answer: stop, and say why.
                if ([E.SESSION_REPLACED, E.AUTHENTICATION_FAILED, E.UNKNOWN_GAME, E.UNSUPPORTED_VERSION, E.PLAYER_BANNED,
                     E.DEVICE_UNLINKED].includes(code)) this.ended = true;
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

        // ---- What every game page shows of the connection.
        const $ = (id) => document.getElementById(id);
        /// The signed-in player's id; whether the connection has given up for good.
        let me = null, closed = false;
        /// The page's queued MATCHMAKE ticket: its id, or null.
        let ticket = null;
        /// The page's native connection, once `connect` has made it.
        let connection = null;
        /// The games with a page here, by mode.
        const PAGES = { catrace: "Cat Race", disks: "Disks", fourinarow: "Four in a Row" };

        function status(text) { $("status").textContent = text; }
        /// What happened just now (a refusal, an error, a player away), beside the status line.
        function note(text) { $("note").textContent = text; }
        function failed(error) { note(error.message); }
        function connectionState(name, text) { $("connection").className = name; $("connection").textContent = text; }

        /// The aliases of the players the page shows, by id: each asked once, those wanted
        /// meanwhile in one GET_ALIASES (at most `ALIASES_PER_REQUEST`), one request at a time;
        /// the player's own is also set by SET_ALIAS (and then no answer asked before it
        /// replaces it). `nameOf(id)` is the alias once known, the start of the id until then
        /// (or the text itself, for what is not a player id); `namesChanged` (a page's) runs
        /// when some arrive. Kept for the page's life: a rename shows after a reload.
        const ALIASES_PER_REQUEST = 100;
        const aliases = new Map(), aliasesWanted = [], aliasesAsked = new Set(), aliasesSetHere = new Set();
        let aliasesInFlight = false, namesChanged = () => {};
        function nameOf(id) {
          const known = aliases.get(id);
          if (known !== undefined) return known;
          if (/^[0-9a-f]{32}$/.test(id) && !aliasesAsked.has(id)) { aliasesAsked.add(id); aliasesWanted.push(id); setTimeout(askAliases, 0); }
          return id.slice(0, 8);
        }
        function askAliases() {
          if (!connection || aliasesInFlight || aliasesWanted.length === 0) return;
          const ids = aliasesWanted.splice(0, ALIASES_PER_REQUEST), fields = new Writer().u8(ids.length);
          for (const id of ids) fields.str(id);
          aliasesInFlight = true;
          connection.request(R.GET_ALIASES, fields.done(), (r) => {
            aliasesInFlight = false;
            for (let i = r.u8(); i > 0; i--) {
              const id = r.str(), alias = r.str();
              if (!aliasesSetHere.has(id)) aliases.set(id, alias);
              if (id === me) showMe();
            }
            namesChanged();
            askAliases();
          }, () => {
            // Asked again the next time they are shown. Not from here: a refusal may come while
            // the connection rejects every request of a session that ended, before the new
            // one numbers its messages.
            aliasesInFlight = false;
            for (const id of ids) aliasesAsked.delete(id);
            setTimeout(askAliases, 0);
          });
        }
        /// The header's name: the player's alias, and the form that sets another (SET_ALIAS),
        /// unless the server's operator locked it.
        let aliasLocked = false;
        function showMe() {
          $("player").replaceChildren("you are ", Object.assign(document.createElement("span"), { className: "you", textContent: nameOf(me) }));
          $("aliasForm").hidden = aliasLocked;
        }
        $("aliasForm").onsubmit = (event) => {
          event.preventDefault();
          const alias = $("alias").value.trim();
          if (!alias || !connection || me === null) return;
          const player = me;
          connection.request(R.SET_ALIAS, new Writer().str(alias).done(), () => {
            aliases.set(player, alias);
            aliasesSetHere.add(player);
            $("alias").value = "";
            note("");
            showMe();
            namesChanged();
          }, (error) => {
            failed(error);
            if (error.code === RE.ALIAS_LOCKED) {
              // The operator's alias replaced the one set here: show it, asked again.
              aliasLocked = true;
              aliasesSetHere.delete(player); aliases.delete(player); aliasesAsked.delete(player);
              showMe();
              namesChanged();
            }
          });
        };

        /// A MATCH_JOINED (or MATCH_RESUMED, or MATCHMAKER_MATCHED after its ticket id): the
        /// match id, its players and presence, and its invite code.
        function readJoined(r) {
          const matchId = r.u64(), mode = r.str(), label = r.str(), capacity = r.u8(), count = r.u8(), players = [];
          for (let i = 0; i < count; i++) players.push({ id: r.str(), presence: r.u8() });
          return { matchId, mode, label, capacity, players, inviteCode: r.str() };
        }

        /// Says where a match of another game than this page's is played: the player has a seat
        /// there (a game going in another tab, a code of another game), which this page cannot show.
        function elsewhere(joined) {
          const name = PAGES[joined.mode];
          if (!name) return note("You have a seat in a " + joined.mode + " match (" + joined.matchId + "), which no page here plays.");
          const link = Object.assign(document.createElement("a"), { href: "/" + joined.mode, textContent: name });
          $("note").replaceChildren("You have a seat in a game of ", link, ": play it there.");
        }

        /// Queues a MATCHMAKE ticket for `mode` (no properties, no query, alone), or cancels the
        /// queued one; `changed` runs when the ticket comes or goes.
        function toggleMatchmaking(mode, minPlayers, maxPlayers, changed) {
          if (ticket !== null) {
            connection.request(R.CANCEL_TICKET, new Writer().str(ticket).done(), () => { ticket = null; changed(); }, (error) => {
              // Matched meanwhile: MATCHMAKER_MATCHED is on its way.
              if (error.code !== RE.NO_SUCH_TICKET) failed(error);
            });
            return;
          }
          const fields = new Writer().str(mode).u8(minPlayers).u8(maxPlayers).u8(0).u8(0).u8(0).str("").done();
          connection.request(R.MATCHMAKE, fields, (r) => { ticket = r.str(); changed(); }, failed);
        }

        /// Joins the private match of an invite `code`; `enter` gets its MATCH_JOINED.
        function joinByCode(code, enter) {
          connection.request(R.JOIN_BY_CODE, new Writer().str(code.trim()).done(), (r) => {
            // A reload finds the game through MATCH_RESUMED, not by joining again.
            if (!BOT) history.replaceState(null, "", location.pathname);
            enter(r);
          }, failed);
        }

        /// Sends `input`, a game's client message, to match `matchId` (MATCH_INPUT, reliable).
        function matchInput(matchId, input) {
          connection.reliable(new Writer().u8(M.MATCH_INPUT).u64(matchId).data(input).done());
        }

        /// LEAVE_MATCH; `done` runs once the seat is gone, also when it was already (the match
        /// ended, or the grace ran out: NOT_IN_MATCH).
        function leaveMatch(matchId, done) {
          connection.request(R.LEAVE_MATCH, new Writer().u64(matchId).done(), done, (error) => {
            if (error.code === RE.NOT_IN_MATCH) done(); else failed(error);
          });
        }

        /// A game's page with a live lobby (`WebPages.lobbyMenu`: Disks, Cat Race): the open
        /// matches of `mode` followed live (SUBSCRIBE_LOBBY), each with a Join button; **New**
        /// (public and listed, with the name typed), **Play friends** (private: an invite code),
        /// join by code, **Quick match** (2 to the chosen size; pressed again, it cancels), and
        /// **Leave**. The game is `game`: `matchId()` is the match on screen (going or over) or
        /// null; `inMatch()` whether the player has a seat in a match going; `enter(r)` gets
        /// every MATCH_JOINED (MATCH_RESUMED, MATCHMAKER_MATCHED); `leave()` goes back to the
        /// lobby; `event(r)`, `presence(who, change)` and `ended(reason)` get the MATCH_EVENT,
        /// PRESENCE and MATCH_ENDED of the match on screen; `idle` is the status line of a
        /// player in none; `controls()`, if given, runs when what the player may do changed (the
        /// connection went down or came back).
        class LobbyMenu {
          constructor(mode, game) {
            this.mode = mode;
            this.game = game;
            /// The open matches, by id (a BigInt), as the lobby last said.
            this.open = new Map();
            $("quick").onclick = () => this.quickMatch();
            $("create").onclick = () => this.create(false);
            $("private").onclick = () => this.create(true);
            $("joinForm").onsubmit = (event) => { event.preventDefault(); joinByCode($("code").value, game.enter); };
            $("leave").onclick = () => {
              if (!game.inMatch()) return game.leave();
              leaveMatch(game.matchId(), () => {
                game.leave();
                // No MATCH_ENDED comes to a player who left; a result its leaving made (a race
                // it ended) is stored before a later request reads it.
                showStandings(mode);
              });
            };
          }

          /// Signs in (``connect``), handling the lobby's and the match's messages.
          connect() {
            const game = this.game;
            connect({
              mode: this.mode,
              controls: () => {
                this.controls();
                game.controls?.();
              },
              signedIn: (first) => {
                // The seat, if the player still has one, comes back with MATCH_RESUMED, next.
                game.leave();
                this.signedIn(first);
              },
              message: (type, r) => {
                switch (type) {
                  case M.LOBBY_UPDATE: this.update(r); break;
                  case M.MATCHMAKER_MATCHED: case M.MATCH_RESUMED: game.enter(r); break;
                  case M.TICKET_CANCELLED: if (!game.inMatch()) status("Matchmaking stopped: " + r.str()); break;
                  case M.MATCH_EVENT: if (r.u64() === game.matchId()) game.event(new Reader(r.data())); break;
                  case M.PRESENCE: if (r.u64() === game.matchId()) game.presence(r.str(), r.u8()); break;
                  case M.MATCH_ENDED: if (r.u64() === game.matchId()) game.ended(r.str()); break;
                }
              },
            });
          }

          /// Whether the player may start or join a match now.
          free() { return me !== null && !closed && !this.game.inMatch() && ticket === null; }

          /// A new session follows no lobby yet: what the last one was told is stale.
          signedIn(first) {
            this.open.clear();
            $("lobby").dataset.live = "false";
            connection.request(R.SUBSCRIBE_LOBBY, new Writer().str(this.mode).done(), () => { $("lobby").dataset.live = "true"; this.show(); }, failed);
            if (first && params.get("join")) joinByCode(params.get("join"), this.game.enter);
          }

          /// A LOBBY_UPDATE, after its type.
          update(r) {
            if (r.str() !== this.mode) return;
            for (let i = r.u16(); i > 0; i--) {
              const change = r.u8(), matchId = r.u64(), entry = { label: r.str(), players: r.u8(), capacity: r.u8(), joinable: r.u8() === 1 };
              if (change === 3) this.open.delete(matchId); else this.open.set(matchId, entry);
            }
            this.show();
          }

          show() {
            const list = $("lobby");
            list.replaceChildren();
            for (const [matchId, entry] of [...this.open].sort(([a], [b]) => (a < b ? -1 : 1))) {
              const item = document.createElement("li");
              item.dataset.match = String(matchId);
              const name = Object.assign(document.createElement("span"), { className: "label", textContent: entry.label || "game " + matchId });
              const seats = Object.assign(document.createElement("span"), { className: "seats", textContent: entry.players + " of " + entry.capacity });
              const join = Object.assign(document.createElement("button"), { textContent: "Join" });
              join.onclick = () => connection.request(R.JOIN_MATCH, new Writer().u64(matchId).done(), this.game.enter, failed);
              item.append(name, " ", seats, " ", join);
              list.append(item);
            }
            $("lobbyEmpty").hidden = this.open.size > 0;
            this.controls();
          }

          /// Starting or joining while free; while matchmaking, only cancelling.
          controls() {
            const usable = me !== null && !closed;
            $("quick").disabled = !usable || this.game.inMatch();
            $("quick").textContent = ticket !== null ? "Cancel quick match" : "Quick match";
            for (const id of ["create", "private", "join"]) $(id).disabled = !this.free();
            for (const button of document.querySelectorAll("#lobby button")) {
              button.disabled = !this.free() || !this.open.get(BigInt(button.parentElement.dataset.match))?.joinable;
            }
          }

          create(isPrivate) {
            const label = isPrivate ? "" : $("label").value.trim();
            const fields = new Writer().str(this.mode).u8(Number($("size").value)).str(label).u8(isPrivate ? 1 : 0).done();
            connection.request(R.CREATE_MATCH, fields, this.game.enter, failed);
          }

          quickMatch() {
            const queuing = ticket === null;
            toggleMatchmaking(this.mode, 2, Number($("size").value), () => {
              if (this.game.matchId() === null) status(queuing ? "Looking for players…" : this.game.idle);
              this.controls();
            });
          }
        }

        /// Shows the leaderboard of `mode` (GET_LEADERBOARD: the top 10) and the player's own
        /// record in it (GET_PROFILE, and its rank: GET_LEADERBOARD around it) under
        /// `WebPages.standings`. Asked at every sign-in and every MATCH_ENDED (a game's result is
        /// stored before its end is told).
        let standingsAsked = 0;
        function showStandings(mode) {
          if (!$("leaders")) return;
          // Stored answers may come out of order: only the latest asking's are shown. Its
          // requests go one after another, so with the aliases asked beside them (nameOf) at
          // most five wait: the default --max-pending-requests (16) refuses none.
          const asking = ++standingsAsked, latest = () => asking === standingsAsked;
          const rating = (value) => String(Math.round(value));
          connection.request(R.GET_LEADERBOARD, new Writer().str(mode).str("").u8(10).done(), (r) => {
            if (!latest()) return;
            r.str();
            const rows = [];
            for (let i = r.u8(); i > 0; i--) {
              const rank = r.u32(), id = r.str(), alias = r.str(), value = r.f64(), won = r.u32(), played = r.u32();
              const item = Object.assign(document.createElement("li"), {
                textContent: rank + ". " + (alias || id.slice(0, 8)) + (id === me ? " (you)" : "") + " · " + rating(value) + " · won " + won + " of " + played,
              });
              if (id === me) item.className = "you";
              rows.push(item);
            }
            $("leaders").replaceChildren(...rows);
            $("leadersEmpty").hidden = rows.length > 0;
            connection.request(R.GET_PROFILE, new Writer().str("").done(), showRecord, failed);
          }, failed);
          function showRecord(r) {
            if (!latest()) return;
            r.str(); r.str(); r.u64(); r.u64();
            let mine = null;
            for (let i = r.u8(); i > 0; i--) {
              const stats = { game: r.str(), played: r.u32(), won: r.u32(), lost: r.u32(), drawn: r.u32(), rating: r.f64() };
              if (stats.game === mode) mine = stats;
            }
            if (!mine) return ($("record").textContent = "Your record starts with your first finished game.");
            const record = "You: played " + mine.played + ", won " + mine.won + ", lost " + mine.lost + ", drawn " + mine.drawn + " · rating " + rating(mine.rating);
            $("record").textContent = record;
            connection.request(R.GET_LEADERBOARD, new Writer().str(mode).str(me).u8(1).done(), (r) => {
              r.str();
              if (latest() && r.u8() > 0) $("record").textContent = record + " · rank " + r.u32();
            }, failed);
          }
        }

        /// Shows an invite code and the link that joins by it (this page with `?join=CODE`).
        function showInvite(code) {
          $("invite").hidden = code === "";
          if (!code) return;
          const link = location.origin + location.pathname + "?join=" + code;
          $("inviteCode").textContent = code;
          $("inviteLink").textContent = link;
          $("inviteLink").href = link;
        }

        /// Signs in and keeps the header true, and the standings of `page.mode` (``showStandings``). `page.signedIn(first)` runs after every new session
        /// (`first` only for the page's first; the last session's tickets and seats are not
        /// this one's, and MATCH_RESUMED follows for each seat the player still has),
        /// `page.controls()` when what the player may do changed, `page.message(type, reader)`
        /// for every message not an answer: MATCHMAKER_MATCHED after its ticket id, and
        /// TICKET_CANCELLED of the page's ticket only, at its reason (the ticket is gone by then).
        function connect(page) {
          let first = true;
          connection = new NativeConnection({
            authenticated(playerId) {
              me = playerId;
              ticket = null;
              showMe();
              connectionState("connected", "connected");
              page.signedIn(first);
              first = false;
              showStandings(page.mode);
              page.controls();
            },
            resumed() { connectionState("connected", "connected"); page.controls(); },
            reconnecting() { connectionState("reconnecting", "reconnecting…"); page.controls(); },
            closed() { closed = true; connectionState("closed", "disconnected"); page.controls(); },
            serverError(code, message) {
              if (code === E.SESSION_REPLACED) note("This player signed in elsewhere (another tab?); reload to play here.");
              else if (code !== E.SESSION_NOT_FOUND && code !== E.SESSION_REVOKED) note(message);
            },
            message(type, r) {
              if (type === M.MATCHMAKER_MATCHED || type === M.TICKET_CANCELLED) {
                const id = r.str();
                if (type === M.TICKET_CANCELLED && id !== ticket) return;
                ticket = null;
                page.controls();
              }
              if (type === M.MATCH_ENDED) showStandings(page.mode);
              page.message(type, r);
            },
          });
          setInterval(() => connection.watch(), 250);
        }
        """#
}
