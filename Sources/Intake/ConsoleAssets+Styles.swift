extension ConsoleAssets {
    /// Usable from a phone's width up: tables scroll sideways in their box, the bar wraps.
    static let styles = #"""
        :root { --fg: #1d2330; --muted: #667085; --line: #d8dde6; --bg: #f6f7f9; --ok: #1f8a4c; --bad: #c4321c;
                --warn: #b7791f; --accent: #2454c5; font-family: system-ui, sans-serif; font-size: 15px; }
        * { box-sizing: border-box; }
        body { margin: 0; color: var(--fg); background: var(--bg); }
        .bar { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; padding: 10px 16px;
               background: #fff; border-bottom: 1px solid var(--line); }
        .brand { font-size: 17px; }
        nav { display: flex; flex-wrap: wrap; gap: 4px 12px; flex: 1; }
        nav a { color: var(--accent); text-decoration: none; padding: 4px 2px; }
        nav a.active { font-weight: 600; border-bottom: 2px solid var(--accent); }
        main { padding: 16px; max-width: 1400px; margin: 0 auto; }
        footer { padding: 8px 16px; font-size: 13px; }
        h1 { font-size: 21px; margin: 4px 0 12px; }
        h2 { font-size: 17px; margin: 20px 0 8px; }
        .muted { color: var(--muted); }
        .error { color: var(--bad); }
        .cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(180px, 1fr)); gap: 12px; }
        .card { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 12px; }
        .card .figure { font-size: 24px; font-weight: 600; }
        .box { overflow-x: auto; background: #fff; border: 1px solid var(--line); border-radius: 6px; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); white-space: nowrap; }
        td.wrap { white-space: normal; word-break: break-word; min-width: 160px; }
        th { font-weight: 600; font-size: 13px; color: var(--muted); }
        td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
        .live { color: var(--ok); font-weight: 600; }
        .lost { color: var(--bad); font-weight: 600; }
        form.filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; margin-bottom: 12px; }
        form.filters label { display: flex; flex-direction: column; font-size: 13px; color: var(--muted); gap: 2px; }
        input, select, button { font: inherit; padding: 5px 8px; border: 1px solid var(--line); border-radius: 4px; }
        button { background: #fff; cursor: pointer; }
        button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
        button.danger { background: var(--bad); color: #fff; border-color: var(--bad); }
        .confirm { background: #fff8e6; border: 1px solid var(--warn); border-radius: 6px; padding: 12px; margin: 12px 0; }
        .confirm p { margin: 0 0 8px; }
        .chart { width: 100%; height: 160px; background: #fff; border: 1px solid var(--line); border-radius: 6px; }
        .legend span { margin-right: 12px; font-size: 13px; }
        .swatch-sent { color: var(--ok); } .swatch-failed { color: var(--bad); } .swatch-other { color: var(--muted); }
        img.icon { width: 24px; height: 24px; border-radius: 5px; vertical-align: middle; }
        .login { max-width: 360px; margin: 10vh auto; background: #fff; border: 1px solid var(--line); border-radius: 8px;
                 padding: 24px; }
        .login form { display: flex; flex-direction: column; gap: 10px; }
        @media (max-width: 640px) {
          main { padding: 10px; }
          nav { order: 3; flex-basis: 100%; }
          .cards { grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 8px; }
          .card { padding: 8px 10px; }
          th, td { padding: 5px 6px; }
          .card .figure { font-size: 20px; }
        }
        """#
}
