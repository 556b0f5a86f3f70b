/// `/fourinarow`: Four in a Row against anyone on the server, a quick match through the
/// matchmaker or a private game by invite code. Its `bot=1` joins (or quick-matches) and plays
/// the first open column from the middle out.
enum WebFourInARowPage {
    /// The page.
    static let html = WebPages.document(
        title: "Four in a Row", script: "/fourinarow.js",
        main: """
            <section id="menu">
              <button id="quick" disabled>Quick match</button>
              <button id="create" disabled>Play a friend</button>
              <form id="joinForm"><input id="code" maxlength="8" placeholder="invite code" autocomplete="off"> <button id="join" disabled>Join</button></form>
            </section>
            \(WebPages.invite(saying: "your friend enters it, or opens"))
            <p id="status">Signing in…</p>
            <p id="note"></p>
            <table id="board" class="waiting" data-phase="none"></table>
            <p id="players"></p>
            \(WebPages.standings)
            """)

    /// `/fourinarow.js`: the game (docs/protocol-fourinarow.md), on ``WebClientScript``.
    static let script = #"""
        "use strict";
        // ---- Four in a Row (docs/protocol-fourinarow.md).
        const COLUMNS = 7, ROWS = 6;
        const game = { matchId: null, seat: null, cells: new Array(42).fill(0), phase: "none", toMove: 255,
                       nextMove: 1, turnEnds: 0, players: [], line: [] };

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
            (seat === 0 ? "red" : "yellow") + ": " + nameOf(id) + (id === me ? " (you)" : "")).join(" · ");
        }

        namesChanged = show;

        function turnEnd(ms) { return ms === 0xFFFFFFFF ? null : Date.now() + ms; }

        function ticking() {
          if (game.phase !== "playing") return;
          // 0xFFFFFFFF: the turn's timer waits for its player to come back (after a restart).
          if (game.turnEnds === null) return status("Their turn · their clock starts when they are back");
          const left = Math.max(0, Math.ceil((game.turnEnds - Date.now()) / 1000));
          status((game.toMove === game.seat ? "Your turn" : "Their turn") + " · " + left + " s");
        }

        function enter(r) {
          const joined = readJoined(r);
          if (joined.mode !== "fourinarow") return elsewhere(joined);
          Object.assign(game, { matchId: joined.matchId, seat: null, cells: new Array(42).fill(0), phase: "waiting", toMove: 255, nextMove: 1, players: [], line: [] });
          showInvite(joined.inviteCode);
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
              game.nextMove = r.u16(); game.toMove = r.u8(); game.turnEnds = turnEnd(r.u32());
              game.line = [];
              game.phase = ["waiting", "playing", "over"][phase] || "waiting";
              if (phase === 2) gameOver(r); else if (phase === 0) status("Waiting for the other player…");
              if (phase === 1) $("invite").hidden = true;
              break;
            }
            case 2: {  // MOVED
              const seat = r.u8(), column = r.u8(), row = r.u8();
              game.cells[row * COLUMNS + column] = seat + 1;
              game.nextMove = r.u16() + 1; game.toMove = r.u8(); game.turnEnds = turnEnd(r.u32());
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
          matchInput(game.matchId, new Writer().u8(1).u16(game.nextMove).u8(column).done());
          game.toMove = 255;  // until MOVED says whose turn it is
          show();
        }

        /// What the player may do: anything while signed in, but only cancel while matchmaking.
        function controls() {
          const usable = me !== null && !closed;
          $("quick").disabled = !usable;
          $("quick").textContent = ticket !== null ? "Cancel quick match" : "Quick match";
          for (const id of ["create", "join"]) $(id).disabled = !usable || ticket !== null;
        }

        function quickMatch() {
          const queuing = ticket === null;
          toggleMatchmaking("fourinarow", 2, 2, () => {
            if (queuing) status("Looking for an opponent…");
            else if (game.phase === "none" || game.phase === "over") status("Matchmaking cancelled.");
            controls();
          });
        }

        $("quick").onclick = quickMatch;
        $("create").onclick = () => connection.request(R.CREATE_MATCH, new Writer().str("fourinarow").u8(2).str("").u8(1).done(), enter, failed);
        $("joinForm").onsubmit = (event) => { event.preventDefault(); joinByCode($("code").value, enter); };

        connect({
          mode: "fourinarow",
          controls,
          signedIn(first) {
            // A game going is this session's only if MATCH_RESUMED (next) says so.
            if (!first && (game.phase === "waiting" || game.phase === "playing")) {
              Object.assign(game, { matchId: null, phase: "none", toMove: 255 });
              $("invite").hidden = true;
              show();
            }
            if (game.phase === "none") status("Start a quick match, or play a friend.");
            if (!first) return;
            if (params.get("join")) joinByCode(params.get("join"), enter);
            else if (BOT) quickMatch();
          },
          message(type, r) {
            switch (type) {
              case M.MATCHMAKER_MATCHED: note(""); enter(r); break;
              case M.TICKET_CANCELLED: if (game.phase === "none" || game.phase === "over") status("Matchmaking stopped: " + r.str()); break;
              case M.MATCH_RESUMED: enter(r); break;
              case M.MATCH_EVENT: if (r.u64() === game.matchId) gameEvent(new Reader(r.data())); break;
              case M.PRESENCE: {
                if (r.u64() !== game.matchId || game.phase !== "playing") break;
                const who = r.str(), change = r.u8();
                if (who !== me && change === P.DISCONNECTED) note("The other player is away; their turn clock still runs.");
                if (who !== me && change === P.RECONNECTED) note("");
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
        setInterval(ticking, 250);
        """#
}
