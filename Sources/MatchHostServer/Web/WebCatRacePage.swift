/// `/catrace`: Cat Race in native `catrace` matches, against anyone on the server: other
/// browsers, terminal players, bots, and the tutorial's own iPhone client on the Cat Race port,
/// which the page can name (START_MATCH inside the match) to give it a seat. The open races
/// come live from the lobby. The track is a canvas; a tap (the button, the track, or the space
/// bar) moves the player's cat one step, and the server decides where every cat is and who won.
enum WebCatRacePage {
    /// The page, offering races of 2 to `largest` racers.
    static func html(largest: Int) -> String {
        WebPages.document(
            title: "Cat Race", script: "/catrace.js",
            main: """
                \(WebPages.lobbyMenu(noun: "race", upTo: largest, selected: 2))
                <section id="gameView" hidden>
                  \(WebPages.invite(saying: "your friends enter it, or open"))
                  <p><span id="matchName"></span> <button id="leave">Leave</button></p>
                  <canvas id="track" width="600" height="96" data-phase="none"></canvas>
                  <p><button id="tap" disabled>Tap</button> <button id="again" hidden>Race again</button></p>
                  <ol id="racers"></ol>
                  <form id="appForm">Racing the Cat Race app? Its player id gets a seat here when it connects:
                    <input id="appPlayer" maxlength="255" placeholder="G:1036727375" autocomplete="off"> <button id="appInvite">Seat it</button></form>
                </section>
                """)
    }

    /// `/catrace.js`: the race (PROTOCOL.md, "Cat Race" and `catrace` in "Game modes"), on
    /// ``WebClientScript``. Its messages are the tutorial's, carried in MATCH_INPUT and
    /// MATCH_EVENT, so its strings and integers are the tutorial's too (a 4-byte length counting a
    /// trailing NUL; 4-byte integers). The page spaces taps for `maxTapRate` (`--max-tap-rate`).
    static func script(maxTapRate: Double) -> String {
        self.template.replacing("__TAP_INTERVAL__", with: String(self.tapInterval(maxTapRate: maxTapRate)))
    }

    /// The fewest milliseconds between two taps the page sends: the server's interval at
    /// `maxTapRate` taps a second, and 10 ms for taps that reach it closer together than they
    /// were made (its bucket of 5 holds a few). At the default 20 a second: 60 ms.
    static func tapInterval(maxTapRate: Double) -> Int {
        Int((1000 / maxTapRate).rounded(.up)) + 10
    }

    private static let template = #"""
        "use strict";
        // ---- Cat Race: each tap is one step of 10 from x = 25; the first cat at x = 445 wins.
        const START_X = 25, STEP_X = 10, FINISH_X = 445, SCREEN_X = 480;
        /// Taps closer together than this (ms) are dropped: a held key repeats faster than the
        /// server's tap-rate limit (`--max-tap-rate`), and the server refuses a tap over it
        /// silently. The server writes its own value here (``tapInterval(maxTapRate:)``).
        const TAP_INTERVAL = __TAP_INTERVAL__;
        const COLORS = ["#b91c1c", "#1d4ed8", "#15803d", "#a16207", "#7e22ce", "#0f766e", "#be185d", "#4d7c0f"];
        const IDLE = "Join an open race, start one, or get a quick match.";
        /// `phase`: "none" (in the lobby), "joined" (seated; no line-up yet), "racing",
        /// "finished" (won; any racer may start the next race), "over" (the match ended).
        const race = { matchId: null, phase: "none", capacity: 0, inviteCode: "", racers: [], mine: null, winner: null, lastTap: -Infinity };

        const canvas = $("track"), pen = canvas.getContext("2d");

        function inMatch() { return race.matchId !== null && race.phase !== "over"; }

        /// A tutorial string: its length counts the trailing NUL, which is not part of it.
        function readString(r) {
          const bytes = r.data();
          return new TextDecoder().decode(bytes.length > 0 && bytes[bytes.length - 1] === 0 ? bytes.subarray(0, bytes.length - 1) : bytes);
        }
        function writeString(w, text) {
          const bytes = new TextEncoder().encode(text);
          return w.u32(bytes.length + 1).raw(bytes).u8(0);
        }

        function myCat() { return race.mine === null ? null : race.racers[race.mine]; }
        /// A tap moves the cat while a race with another racer in it runs, no other cat is at
        /// the line, and the connection is up. Not while it is down: taps queued then would all reach
        /// the server at once, which moves the cat a bucketful of them, and the page would show
        /// it steps ahead of where the others see it. This cat past the line still taps until
        /// GAME_OVER: if the server had not moved it all the way, the next claims take it there.
        function canTap() {
          return race.phase === "racing" && race.racers.length >= 2 && myCat() !== null && connection.established && !closed
            && !race.racers.some((racer, seat) => seat !== race.mine && racer.x >= FINISH_X);
        }
        function racerName(racer) { return racer.alias || racer.id.slice(0, 8); }
        /// A lane's name: the racer's, and whether it is this player.
        function laneName(seat) { return racerName(race.racers[seat]) + (seat === race.mine ? " (you)" : ""); }

        function show() {
          const playing = race.matchId !== null;
          $("lobbyView").hidden = playing;
          $("gameView").hidden = !playing;
          canvas.dataset.phase = race.phase;
          $("leave").textContent = inMatch() ? "Leave" : "Back to the lobby";
          $("tap").disabled = !canTap();
          $("again").hidden = race.phase !== "finished";
          $("appForm").hidden = !inMatch();
          $("invite").hidden = !inMatch() || race.inviteCode === "" || race.racers.length >= race.capacity;
          const list = $("racers");
          list.replaceChildren();
          race.racers.forEach((racer, seat) => {
            const item = document.createElement("li");
            item.dataset.x = String(racer.x);
            item.style.color = COLORS[seat % COLORS.length];
            item.textContent = laneName(seat) + (seat === race.winner ? " won" : "");
            list.append(item);
          });
          if (race.phase === "racing") {
            status(race.racers.length < 2 ? "Waiting for another racer: the race starts when one joins."
              : "Race! Tap, click the track or press the space bar.");
          } else if (race.phase === "finished") {
            const winner = race.winner === null ? null : race.racers[race.winner];
            status((race.winner === race.mine ? "You won!" : winner ? racerName(winner) + " won." : "The race is over.") + " Race again?");
          }
          draw();
          menu.controls();
        }

        function draw() {
          const lanes = Math.max(2, race.racers.length), lane = 48;
          if (canvas.height !== lanes * lane) canvas.height = lanes * lane;
          const width = canvas.width, at = (x) => 20 + (x / SCREEN_X) * (width - 40);
          pen.clearRect(0, 0, width, canvas.height);
          for (let seat = 0; seat < lanes; seat++) {
            pen.fillStyle = seat % 2 ? "#e2e8f0" : "#f1f5f9";
            pen.fillRect(0, seat * lane, width, lane);
          }
          pen.fillStyle = "#0f172a";
          for (let y = 0; y < canvas.height; y += 8) pen.fillRect(at(FINISH_X) + ((y / 8) % 2 ? 4 : 0), y, 4, 8);
          race.racers.forEach((racer, seat) => {
            const x = at(Math.min(racer.x, SCREEN_X)), y = seat * lane + lane / 2, color = COLORS[seat % COLORS.length];
            pen.fillStyle = color;
            pen.beginPath(); pen.arc(x, y + 4, 13, 0, 2 * Math.PI); pen.fill();
            for (const side of [-1, 1]) {
              pen.beginPath(); pen.moveTo(x + side * 12, y - 2); pen.lineTo(x + side * 9, y - 18); pen.lineTo(x + side * 2, y - 8); pen.fill();
            }
            pen.fillStyle = "#fff";
            for (const side of [-1, 1]) { pen.beginPath(); pen.arc(x + side * 5, y + 1, 2.5, 0, 2 * Math.PI); pen.fill(); }
            pen.fillStyle = "#334155";
            pen.font = (seat === race.mine ? "600 " : "") + "12px system-ui, sans-serif";
            pen.fillText(laneName(seat), 4, seat * lane + 13);
          });
        }

        function enter(r) {
          const joined = readJoined(r);
          if (joined.mode !== "catrace") return elsewhere(joined);
          Object.assign(race, { matchId: joined.matchId, phase: "joined", capacity: joined.capacity, inviteCode: joined.inviteCode,
                                racers: [], mine: null, winner: null });
          $("matchName").textContent = "Race " + joined.matchId + (joined.label ? " · " + joined.label : "");
          showInvite(joined.inviteCode);
          note("");
          status("Taking a seat…");
          show();
        }

        function leaveView() {
          Object.assign(race, { matchId: null, phase: "none", inviteCode: "", racers: [], mine: null, winner: null });
          status(IDLE);
          show();
        }

        function raceEvent(r) {
          switch (r.u8()) {
            case 1:  // NOT_IN_MATCH: a racer left or stayed away; the match ends (MATCH_ENDED follows).
              race.phase = "over";
              status("The race is over: a racer left.");
              break;
            case 3: {  // MATCH_STARTED: the line-up, after every join and at every start
              const active = r.u8() === 0, racers = [];
              for (let i = r.u8(); i > 0; i--) racers.push({ id: readString(r), alias: readString(r), x: r.u32() });
              const mine = racers.findIndex(({ id }) => id === me), before = myCat();
              // A line-up sent for a racer joining mid-race may predate this player's own taps in
              // flight: its own claim stands (the server does not echo its moves back to it).
              if (active && race.phase === "racing" && before !== null && mine >= 0) racers[mine].x = Math.max(racers[mine].x, before.x);
              Object.assign(race, { racers, mine: mine >= 0 ? mine : null, phase: active ? "racing" : "finished", winner: null });
              if (!active) {
                // A snapshot of a race won (after a reconnect): the cat past the line won it.
                const leader = racers.reduce((best, racer, seat) => (best === null || racer.x > racers[best].x ? seat : best), null);
                race.winner = leader !== null && racers[leader].x >= FINISH_X ? leader : null;
              }
              break;
            }
            case 5: {  // PLAYER_MOVED: another racer's cat (the server names the mover)
              const seat = r.u8(), x = r.u32();
              if (seat !== race.mine && race.racers[seat]) race.racers[seat].x = x;
              break;
            }
            case 6: {  // GAME_OVER
              race.winner = r.u8();
              race.phase = "finished";
              break;
            }
            default: return;
          }
          show();
        }

        /// One step, if taps move the cat now and the last was long enough ago (`time`: the
        /// input event's, so that a page busy for a moment does not merge a player's taps).
        function tap(time) {
          if (!canTap() || time - race.lastTap < TAP_INTERVAL) return;
          race.lastTap = time;
          const cat = myCat();
          cat.x += STEP_X;
          matchInput(race.matchId, new Writer().u8(4).u32(cat.x).done());  // MOVED_SELF
          show();
        }

        $("tap").addEventListener("pointerdown", (event) => { event.preventDefault(); tap(event.timeStamp); });
        canvas.addEventListener("pointerdown", (event) => tap(event.timeStamp));
        // The space bar anywhere but in a field, and Enter on the Tap button; a held key is one
        // tap (its repeats are not the player tapping), and no key clicks the focused button.
        document.addEventListener("keydown", (event) => {
          const onTap = event.target === $("tap");
          if (race.matchId === null || !(event.key === " " || (event.key === "Enter" && onTap))) return;
          if (!onTap && event.target.closest("input, select, button")) return;
          event.preventDefault();
          if (!event.repeat) tap(event.timeStamp);
        });
        $("again").onclick = () => {
          if (race.phase === "finished") matchInput(race.matchId, new Writer().u8(7).done());  // RESTART_MATCH
        };
        $("appForm").onsubmit = (event) => {
          event.preventDefault();
          const id = $("appPlayer").value.trim();
          // The space bar taps again, not this form.
          document.activeElement?.blur();
          if (!inMatch() || id === "") return;
          // What the server would take for bad input, closing the connection (PROTOCOL.md: a
          // tutorial string is at most 255 bytes, without control characters).
          if (new TextEncoder().encode(id).length > 255 || /[\u0000-\u001f\u007f-\u009f]/.test(id)) {
            return note("A player id is at most 255 bytes, with no control characters.");
          }
          // START_MATCH names tutorial clients: each gets a reserved seat, taken when it connects.
          matchInput(race.matchId, writeString(new Writer().u8(2).u8(1), id).done());
          $("appPlayer").value = "";
          note("If " + id + " connects to the Cat Race port, it races here (unless it is racing elsewhere).");
        };
        const menu = new LobbyMenu("catrace", {
          matchId: () => race.matchId, inMatch, enter, leave: leaveView, event: raceEvent, idle: IDLE,
          controls() { $("tap").disabled = !canTap(); },
          presence(who, change) {
            if (who !== me && change === P.DISCONNECTED) note("A racer is away: their cat stays where it is.");
            if (who !== me && change === P.RECONNECTED) note("");
          },
          ended(reason) {
            if (race.phase !== "over") { race.phase = "over"; status("The race is over: " + reason); }
            show();
          },
        });
        menu.connect();
        """#
}
