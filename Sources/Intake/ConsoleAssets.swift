/// The console's pages, embedded in the binary: no build step, no outside origin. The script builds every
/// element with `textContent` (never markup from data), so a partner's or a device's text is always text.
enum ConsoleAssets {
    static let indexHTML = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Herald console</title>
        <link rel="stylesheet" href="/console/assets/console.css">
        <script src="/console/assets/console.js" defer></script>
        </head>
        <body>
        <header class="bar">
          <strong class="brand">Herald</strong>
          <nav id="nav">
            <a href="#/overview" data-page="overview">Overview</a>
            <a href="#/workers" data-page="workers">Workers</a>
            <a href="#/failures" data-page="failures">Failures</a>
            <a href="#/requests" data-page="requests">Requests</a>
            <a href="#/partners" data-page="partners">Partners</a>
            <a href="#/activities" data-page="activities">Live Activities</a>
            <a href="#/webhooks" data-page="webhooks">Webhooks</a>
            <a href="#/tokens" data-page="tokens">Tokens</a>
            <a href="#/audit" data-page="audit">Audit</a>
          </nav>
          <button id="signout" type="button">Sign out</button>
        </header>
        <main id="main"><p class="muted">Loading…</p></main>
        <footer class="muted" id="status"></footer>
        </body>
        </html>
        """#

    static func loginHTML(error: String?) -> String {
        let message = error.map { "<p class=\"error\" id=\"login-error\">\(escape($0))</p>" } ?? ""
        return #"""
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Herald console: sign in</title>
            <link rel="stylesheet" href="/console/assets/console.css">
            </head>
            <body>
            <main class="login">
            <h1>Herald console</h1>
            <form method="post" action="/console/login">
            <label for="token">Admin token</label>
            <input id="token" name="token" type="password" autocomplete="current-password" required>
            <button type="submit" id="signin">Sign in</button>
            </form>
            """# + message + "\n</main>\n</body>\n</html>\n"
    }

    /// HTML text escaping, for the one server-rendered message.
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
