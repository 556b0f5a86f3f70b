/// `/disks`: Disks against anyone on the server. The open games come live from the lobby
/// (SUBSCRIBE_LOBBY); a player joins one, starts one (public, listed, or private, with an invite
/// code), or asks the matchmaker. The board is a canvas; a tap on it is a TAP.
enum WebDisksPage {
    /// The page, offering games of 2 to `largest` players.
    static func html(largest: Int) -> String {
        WebPages.document(
            title: "Disks", script: "/disks.js",
            main: """
                \(WebPages.lobbyMenu(noun: "game", upTo: largest, selected: 4))
                <section id="gameView" hidden>
                  \(WebPages.invite(saying: "your friends enter it, or open"))
                  <p><span id="matchName"></span> <span id="clock"></span> <button id="leave">Leave</button></p>
                  <canvas id="board" width="600" height="600" data-phase="none"></canvas>
                  <ol id="scores"></ol>
                </section>
                """)
    }

    /// `/disks.js`: the game (docs/protocol-disks.md), on ``WebClientScript``.
    static let script = #"""
        "use strict";
        // ---- Disks (docs/protocol-disks.md): the server spawns disks, the first tap to reach it scores.
        const PALETTE = ["#ef4444", "#f97316", "#eab308", "#22c55e", "#3b82f6", "#a855f7"];
        const SEAT_COLORS = ["#b91c1c", "#1d4ed8", "#15803d", "#a16207", "#7e22ce", "#0f766e", "#be185d", "#4d7c0f"];
        /// How long a hit disk spins away, and a missed tap's mark stays, in milliseconds.
        const FADE = 450, MISS = 350;
        /// The status line of a player in no game.
        const IDLE = "Join an open game, start one, or get a quick match.";
        const game = { matchId: null, phase: "none", capacity: 0, present: new Map(), seat: null, board: { width: 1000, height: 1000 },
                       disks: new Map(), fading: [], misses: [], scores: [], timeLeftAt: 0, timeLeft: 0, scoreLimit: 0, result: null };
        const canvas = $("board"), pen = canvas.getContext("2d");

        function inMatch() { return game.matchId !== null && game.phase !== "over"; }

        function showScores() {
          const list = $("scores");
          list.replaceChildren();
          for (const { seat, id, score } of game.scores) {
            const item = document.createElement("li");
            item.dataset.seat = String(seat);
            item.style.color = SEAT_COLORS[seat % SEAT_COLORS.length];
            item.textContent = nameOf(id) + (id === me ? " (you)" : "") + ": " + score;
            list.append(item);
          }
        }

        namesChanged = () => {
          showScores();
          if (game.phase === "over" && game.result) showResult();
        };

        /// The game or the lobby, whichever the player is in.
        function showView() {
          const playing = game.matchId !== null;
          $("lobbyView").hidden = playing;
          $("gameView").hidden = !playing;
          canvas.dataset.phase = game.phase;
          $("leave").textContent = inMatch() ? "Leave" : "Back to the lobby";
          menu.controls();
        }

        function waitingStatus() {
          const here = [...game.present.values()].filter((presence) => presence === 1).length;
          status("Waiting for players: " + here + " of " + game.capacity + " here. Play starts when enough have joined.");
        }

        function enter(r) {
          const joined = readJoined(r);
          if (joined.mode !== "disks") return elsewhere(joined);
          Object.assign(game, { matchId: joined.matchId, phase: "waiting", capacity: joined.capacity, seat: null, disks: new Map(),
                                fading: [], misses: [], scores: [], timeLeft: 0, result: null });
          game.present = new Map(joined.players.map(({ id, presence }) => [id, presence]));
          $("matchName").textContent = "Game " + joined.matchId + (joined.label ? " · " + joined.label : "");
          showInvite(joined.inviteCode);
          note("");
          waitingStatus();
          showScores();
          showView();
        }

        function leaveView() {
          Object.assign(game, { matchId: null, phase: "none", disks: new Map(), fading: [], scores: [] });
          $("invite").hidden = true;
          status(IDLE);
          showView();
        }

        function readDisk(r) { return { id: r.u32(), x: r.u16(), y: r.u16(), radius: r.u16(), color: r.u8() }; }

        function readScores(r) {
          const scores = [];
          for (let i = r.u8(); i > 0; i--) scores.push({ seat: r.u8(), id: r.str(), score: r.u16() });
          return scores;
        }

        function clock(timeLeftMs) { game.timeLeft = timeLeftMs; game.timeLeftAt = performance.now(); }

        function gameOver(r) {
          const reason = r.u8(), winners = [];
          for (let i = r.u8(); i > 0; i--) winners.push(r.u8());
          game.scores = readScores(r);
          game.phase = "over";
          game.disks = new Map();
          game.result = { winners, why: ["", "score limit", "time is up", "the others left"][reason] || "" };
          clock(0);
          showResult();
        }

        /// The status line of a game that is over (again when a winner's alias arrives).
        function showResult() {
          const { winners, why } = game.result;
          const names = winners.map((seat) => {
            const entry = game.scores.find((scored) => scored.seat === seat);
            return entry ? nameOf(entry.id) : "seat " + seat;
          });
          const result = winners.length === 0 ? "Nobody won" : winners.includes(game.seat) ? (winners.length > 1 ? "You tied for the win" : "You won")
            : "You lost: " + names.join(" and ") + " won";
          status(result + (why ? " (" + why + ")" : ""));
        }

        function gameEvent(r) {
          const now = performance.now();
          switch (r.u8()) {
            case 1: {  // STATE
              const phase = r.u8();
              r.u32(); r.u64(); clock(r.u32());
              game.scoreLimit = r.u16();
              game.board = { width: r.u16(), height: r.u16() };
              game.disks = new Map();
              for (let i = r.u8(); i > 0; i--) { const disk = readDisk(r); game.disks.set(disk.id, disk); }
              game.scores = readScores(r);
              const mine = game.scores.find(({ id }) => id === me);
              if (mine) game.seat = mine.seat;
              game.phase = ["waiting", "playing", "over"][phase] || "waiting";
              if (game.phase === "waiting") waitingStatus();
              if (game.phase === "playing") { $("invite").hidden = true; status("Tap the disks! First to " + game.scoreLimit + " wins."); }
              if (game.phase === "over") status("The game is over.");
              break;
            }
            case 2: {  // TICK
              r.u32(); r.u64(); clock(r.u32());
              const lists = r.u8();
              if (lists & 1) for (let i = r.u8(); i > 0; i--) { const disk = readDisk(r); game.disks.set(disk.id, disk); }
              if (lists & 2) for (let i = r.u8(); i > 0; i--) {
                const diskId = r.u32(), seat = r.u8(), score = r.u16(), disk = game.disks.get(diskId);
                if (disk) game.fading.push({ ...disk, seat, at: now });
                game.disks.delete(diskId);
                const entry = game.scores.find((entry) => entry.seat === seat);
                if (entry) entry.score = score; else game.scores.push({ seat, id: "seat " + seat, score });
              }
              if (lists & 4) for (let i = r.u8(); i > 0; i--) game.disks.delete(r.u32());
              if (!(lists & 2)) return;  // the scores and the view are as they were
              break;
            }
            case 3: gameOver(r); break;  // GAME_OVER
            case 4: {  // TAP_MISSED
              const x = r.u16(), y = r.u16(), reason = r.u8();
              game.misses.push({ x, y, at: now });
              note(["", "Missed: no disk there", "Too late: someone hit it first", "Not playing yet"][reason] || "Missed");
              return;
            }
          }
          showScores();
          showView();
        }

        function draw() {
          const now = performance.now(), size = canvas.width, scale = size / game.board.width;
          pen.clearRect(0, 0, size, size);
          const circle = (x, y, radius) => { pen.beginPath(); pen.arc(x * scale, y * scale, radius * scale, 0, 2 * Math.PI); };
          for (const disk of game.disks.values()) {
            circle(disk.x, disk.y, disk.radius);
            pen.fillStyle = PALETTE[disk.color % PALETTE.length];
            pen.fill();
          }
          game.fading = game.fading.filter(({ at }) => now - at < FADE);
          for (const disk of game.fading) {
            const t = (now - disk.at) / FADE;
            pen.save();
            pen.globalAlpha = 1 - t;
            pen.translate(disk.x * scale, disk.y * scale);
            pen.scale(Math.cos(t * Math.PI * 2), 1);
            pen.beginPath(); pen.arc(0, 0, disk.radius * scale, 0, 2 * Math.PI);
            pen.fillStyle = PALETTE[disk.color % PALETTE.length]; pen.fill();
            pen.lineWidth = 4; pen.strokeStyle = SEAT_COLORS[disk.seat % SEAT_COLORS.length]; pen.stroke();
            pen.restore();
          }
          game.misses = game.misses.filter(({ at }) => now - at < MISS);
          pen.strokeStyle = "#64748b"; pen.lineWidth = 2;
          for (const { x, y } of game.misses) {
            const d = 12;
            pen.beginPath();
            pen.moveTo(x * scale - d, y * scale - d); pen.lineTo(x * scale + d, y * scale + d);
            pen.moveTo(x * scale + d, y * scale - d); pen.lineTo(x * scale - d, y * scale + d);
            pen.stroke();
          }
          const left = game.phase === "playing" ? Math.max(0, game.timeLeft - (now - game.timeLeftAt)) : game.timeLeft;
          $("clock").textContent = game.phase === "playing" ? Math.ceil(left / 1000) + " s left" : "";
          requestAnimationFrame(draw);
        }

        function tap(x, y) {
          if (!inMatch()) return;
          matchInput(game.matchId, new Writer().u8(1).u16(x).u16(y).done());
        }

        canvas.addEventListener("pointerdown", (event) => {
          const bounds = canvas.getBoundingClientRect();
          const x = Math.round(((event.clientX - bounds.left) / bounds.width) * game.board.width);
          const y = Math.round(((event.clientY - bounds.top) / bounds.height) * game.board.height);
          tap(Math.min(Math.max(x, 0), game.board.width), Math.min(Math.max(y, 0), game.board.height));
        });

        const menu = new LobbyMenu("disks", {
          matchId: () => game.matchId, inMatch, enter, leave: leaveView, event: gameEvent, idle: IDLE,
          presence(who, change) {
            if (change === P.LEFT) game.present.delete(who); else game.present.set(who, change === P.DISCONNECTED ? 2 : 1);
            // A player taking a seat during play gets STATE; the others learn of its seat here:
            // seats are numbered in the order they are taken, and the scores list them all.
            if (change === P.JOINED && game.scores.length > 0 && !game.scores.some(({ id }) => id === who)) {
              game.scores.push({ seat: game.scores.length, id: who, score: 0 });
              showScores();
            }
            if (game.phase === "waiting") waitingStatus();
          },
          ended(reason) {
            if (game.phase !== "over") { game.phase = "over"; status("The game ended: " + reason); }
            showView();
          },
        });
        menu.connect();
        requestAnimationFrame(draw);
        """#
}
