/// What the web port's pages share: the document around each page's content, the index at
/// `/`, and the style sheet.
///
/// No page has inline script or style: everything comes from this origin as files, so the
/// pages' Content-Security-Policy (``WebSite/contentSecurityPolicy``) allows nothing inline.
enum WebPages {
    /// A game page: the header (its title, the connection and the player), then `main`, then
    /// the native client (`/matchhost.js`) and the game's own `script`.
    static func document(title: String, script: String, main: String) -> String {
        """
        \(Self.head(title: "\(title) · MatchHost"))
        <header><h1><a href="/">MatchHost</a> · \(title)</h1><span id="connection" class="connecting">connecting</span><span id="player"></span><form id="aliasForm" hidden><input id="alias" maxlength="63" placeholder="your name" autocomplete="off"> <button id="setAlias">Set name</button></form></header>
        \(main)
        <script src="/matchhost.js"></script>
        <script src="\(script)"></script>
        </body>
        </html>
        """
    }

    /// The menu and lobby of a game with a live lobby (run by the client script's `LobbyMenu`):
    /// the sizes a player may pick (`selected` first shown), **New** `noun`, **Play friends**,
    /// join by code, **Quick match**, the status lines, and the open matches.
    static func lobbyMenu(noun: String, upTo largest: Int, selected: Int) -> String {
        // The server refuses a size over its bound (--max-players, and --max-racers for a
        // race): offer none, but always the bound itself.
        let sizes = [2, 3, 4, 6, 8, 12, 16].filter { $0 < largest } + [max(2, largest)]
        let selected = min(selected, max(2, largest))
        let options = sizes.map { $0 == selected ? "<option selected>\($0)</option>" : "<option>\($0)</option>" }.joined()
        return """
            <section id="menu">
              <label>Players <select id="size">\(options)</select></label>
              <button id="quick" disabled>Quick match</button>
              <input id="label" maxlength="40" placeholder="name (optional)" autocomplete="off"> <button id="create" disabled>New \(noun)</button>
              <button id="private" disabled>Play friends</button>
              <form id="joinForm"><input id="code" maxlength="8" placeholder="invite code" autocomplete="off"> <button id="join" disabled>Join</button></form>
            </section>
            <p id="status">Signing in…</p>
            <p id="note"></p>
            <section id="lobbyView">
              <h2>Open \(noun)s</h2>
              <ul id="lobby"></ul>
              <p id="lobbyEmpty">No open \(noun)s yet: start one.</p>
              \(Self.standings)
            </section>
            """
    }

    /// Where the client script's `showStandings` shows the game's leaderboard and the player's record.
    static let standings = """
        <section id="standings">
          <h2>Leaderboard</h2>
          <ol id="leaders"></ol>
          <p id="leadersEmpty">Nobody has finished a game yet.</p>
          <p id="record"></p>
        </section>
        """

    /// Where the client script's `showInvite` shows a private match's invite code and the link
    /// that joins by it; `how` says what a friend does with them.
    static func invite(saying how: String) -> String {
        #"<p id="invite" hidden>Invite code <code id="inviteCode"></code>: \#(how) <a id="inviteLink"></a></p>"#
    }

    /// `/`: the games a browser can play here.
    static let index = """
        \(Self.head(title: "MatchHost"))
        <header><h1>MatchHost</h1></header>
        <p>Games to play in this browser, against anyone on this server: in another browser, a terminal (<code>matchhost play</code>), or a bot.</p>
        <ul id="games">
          <li><a href="/catrace">Cat Race</a>: tap to run your cat to the line first. 2 to 16 racers, with the Cat Race app's players too; live lobby of open races.</li>
          <li><a href="/disks">Disks</a>: the server spawns disks; tap them before the others do. 2 to 16 players, live lobby of open games.</li>
          <li><a href="/fourinarow">Four in a Row</a>: turn-based, for two; every move saved on the server before it counts.</li>
        </ul>
        </body>
        </html>
        """

    /// Every page's start, to its `<body>`.
    private static func head(title: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(title)</title>
        <link rel="stylesheet" href="/matchhost.css">
        </head>
        <body>
        """
    }

    /// `/matchhost.css`.
    static let style = """
        body { font-family: system-ui, sans-serif; margin: 1.5rem auto; max-width: 40rem; padding: 0 1rem; color: #222; }
        header { display: flex; align-items: baseline; gap: 1rem; flex-wrap: wrap; }
        h1 { font-size: 1.4rem; margin: 0; }
        h1 a { color: inherit; text-decoration: none; }
        h2 { font-size: 1.1rem; }
        #games li { margin: .5rem 0; }
        #connection { font-size: .85rem; padding: .1rem .5rem; border-radius: .6rem; background: #eee; }
        #connection.connected { background: #d8f3dc; }
        #connection.reconnecting, #connection.connecting { background: #fff3bf; }
        #connection.closed { background: #ffd6d6; }
        #menu { display: flex; gap: .5rem; flex-wrap: wrap; align-items: center; margin: 1rem 0; }
        button, select { font-size: 1rem; padding: .4rem .9rem; }
        input { font-size: 1rem; padding: .35rem; width: 9rem; }
        #code { width: 7rem; text-transform: uppercase; }
        #status { min-height: 1.4rem; font-weight: 600; }
        #invite code { font-size: 1.2rem; }
        .you { font-weight: 600; }
        table#board { border-collapse: separate; border-spacing: 4px; background: #1d4ed8; border-radius: 8px; margin: 1rem 0; }
        table#board td { width: 2.6rem; height: 2.6rem; border-radius: 50%; background: #f8fafc; cursor: pointer; }
        table#board td.seat0 { background: #ef4444; }
        table#board td.seat1 { background: #facc15; }
        table#board td.line { box-shadow: 0 0 0 4px #16a34a inset; }
        table#board.waiting td { cursor: default; }
        canvas#board { width: 100%; max-width: 600px; aspect-ratio: 1; background: #f1f5f9; border-radius: 8px; touch-action: none; cursor: crosshair; }
        #lobby { padding-left: 1.2rem; }
        #lobby li { margin: .3rem 0; }
        #lobby .seats { color: #555; }
        #scores { font-weight: 600; }
        #leaders { padding-left: 0; list-style: none; }
        #leaders li { margin: .2rem 0; font-variant-numeric: tabular-nums; }
        #clock { font-variant-numeric: tabular-nums; margin: 0 1rem; }
        canvas#track { width: 100%; max-width: 600px; border-radius: 8px; touch-action: manipulation; cursor: pointer; }
        button#tap { font-size: 1.3rem; padding: .6rem 2.4rem; touch-action: manipulation; }
        #racers { font-weight: 600; }
        #aliasForm input { width: 8rem; font-size: .9rem; }
        #aliasForm button { font-size: .9rem; padding: .25rem .6rem; }
        #appForm { color: #555; font-size: .9rem; }
        #appForm input { width: 11rem; }
        """
}
