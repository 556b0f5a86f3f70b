/// The admin page at `GET /`: one HTML document, no assets, whose script reads `/health` and
/// `/api/matches` every two seconds and shows them. It is served as a constant: the page holds
/// no data itself, so nothing a player sends ever reaches its HTML (names are set as text).
enum AdminPage {
    /// Seconds between two refreshes of the page's data.
    static let refreshSeconds = 2

    static let html = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>MatchHost admin</title>
        <style>
        body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
        h1 { font-size: 1.4em; margin: 0 0 .5em; }
        table { border-collapse: collapse; margin: .5em 0 1.5em; }
        th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; }
        th { background: #f3f3f3; }
        #status.serving { color: #176f2c; } #status.unavailable, #storage.failing { color: #b00020; }
        .note { color: #666; }
        </style>
        </head>
        <body>
        <h1>MatchHost</h1>
        <p>Server: <strong id="status">loading…</strong> · storage: <strong id="storage">…</strong>
           · <span class="note" id="updated"></span></p>
        <table id="counts">
        <tr><th>native connections</th><th>sessions</th><th>native matches</th><th>Cat Race connections</th><th>Cat Race matches</th></tr>
        <tr><td id="nativeConnections">–</td><td id="sessions">–</td><td id="nativeMatches">–</td>
            <td id="catraceConnections">–</td><td id="catraceMatches">–</td></tr>
        </table>
        <h2>Running matches <span class="note" id="shown"></span></h2>
        <table id="matches">
        <thead><tr><th>id</th><th>game</th><th>label</th><th>players</th><th>connected</th><th>capacity</th><th>access</th></tr></thead>
        <tbody></tbody>
        </table>
        <p class="note">Metrics for Prometheus: <a href="/metrics">/metrics</a> · health: <a href="/health">/health</a></p>
        <script>
        async function refresh() {
          try {
            const health = await (await fetch('/health', { cache: 'no-store' })).json();
            const status = document.getElementById('status');
            status.textContent = health.status;
            status.className = health.status;
            const storage = document.getElementById('storage');
            storage.textContent = health.storage;
            storage.className = health.storage;
            for (const key of ['nativeConnections', 'sessions', 'nativeMatches', 'catraceConnections', 'catraceMatches']) {
              document.getElementById(key).textContent = health[key];
            }
            const list = await (await fetch('/api/matches', { cache: 'no-store' })).json();
            const body = document.querySelector('#matches tbody');
            body.replaceChildren(...list.matches.map(match => {
              const row = document.createElement('tr');
              row.dataset.match = match.id;
              for (const value of [match.id, match.mode, match.label, match.players, match.connected, match.capacity,
                                   match.isPrivate ? 'invite code' : 'open']) {
                const cell = document.createElement('td');
                cell.textContent = value;
                row.appendChild(cell);
              }
              return row;
            }));
            document.getElementById('shown').textContent =
              list.total > list.matches.length ? `(the first ${list.matches.length} of ${list.total})` : `(${list.total})`;
            document.getElementById('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
          } catch (error) {
            const status = document.getElementById('status');
            status.textContent = 'unreachable';
            status.className = 'unavailable';
          }
        }
        refresh();
        setInterval(refresh, \(refreshSeconds * 1000));
        </script>
        </body>
        </html>
        """
}
