"""The own eval's hand-written corpus, pulse-dashboard: TypeScript / React 18 / Vite / TanStack
Query. ``write_dataset`` calls ``add`` in the corpus's order; the records are as they were
written, one per line."""

from bench.eval.dataset_spec import O, Q, project


def add():
    # ---------------------------------------------------------------------------
    # 2. pulse-dashboard: TypeScript / React 18 / Vite / TanStack Query
    # ---------------------------------------------------------------------------
    project("dash", "/home/dev/pulse-dashboard", "2026-06-09", 14)

    O(1, 1, "discovery", "Explored the dashboard codebase structure", "Vite + React 18 SPA organised by feature folders",
      "Claude surveyed the repo before the first task. Features live under src/features (alerts, metrics, services), all HTTP goes through src/api/client.ts, and server state uses TanStack Query v5.",
      ["src/features/{alerts,metrics,services}", "src/api/client.ts wraps fetch and attaches the bearer token", "Redux Toolkit store in src/store/index.ts holds UI state"],
      ["project structure", "react"], ["src/main.tsx", "src/api/client.ts", "src/store/index.ts"], [])
    O(2, 1, "discovery", "Auth uses OIDC via oidc-client-ts with tokens in sessionStorage", "Login redirects to Keycloak",
      "The app authenticates with Keycloak through oidc-client-ts. Tokens are kept in sessionStorage so each tab logs in separately, and silent renew runs via an iframe.",
      ["src/auth/oidc.ts UserManager config, automaticSilentRenew: true", "Keycloak realm 'ops', client 'pulse-web'"],
      ["authentication", "oidc"], ["src/auth/oidc.ts"], [])
    O(3, 1, "change", "Pinned pnpm 9 via corepack", "packageManager field in package.json",
      "CI and laptops used different pnpm majors, producing lockfile churn. package.json now declares packageManager pnpm@9.4.0 and CI runs corepack enable.",
      ["package.json \"packageManager\": \"pnpm@9.4.0\"", ".github/workflows/ci.yml runs corepack enable"],
      ["tooling", "package manager"], ["package.json"], ["package.json", ".github/workflows/ci.yml"])
    O(4, 1, "bugfix", "Vitest component tests failed with window is not defined", "Test environment defaulted to node",
      "New component tests crashed with ReferenceError: window is not defined because vitest.config.ts had no environment set. Set environment: 'jsdom' and added @testing-library/jest-dom in the setup file.",
      ["ReferenceError: window is not defined", "vitest.config.ts test.environment = 'jsdom'", "src/test/setup.ts imports @testing-library/jest-dom/vitest"],
      ["tests", "vitest", "jsdom"], ["vitest.config.ts"], ["vitest.config.ts", "src/test/setup.ts"])

    O(5, 2, "feature", "Live metrics via polling every 5 seconds", "refetchInterval: 5000 in useMetrics",
      "The metrics page needed near-live values. As a first step useMetrics polls the /metrics/query endpoint every 5s while the tab is visible.",
      ["src/features/metrics/useMetrics.ts refetchInterval: 5000", "refetchIntervalInBackground: false"],
      ["live updates", "polling", "react query"], ["src/features/metrics/useMetrics.ts"], ["src/features/metrics/useMetrics.ts"])
    O(6, 2, "bugfix", "Charts flashed empty on every poll", "Query key changed with the time window",
      "Because the rolling time window is part of the query key, each poll was a new query and charts showed the loading state. Using placeholderData: keepPreviousData keeps the old series on screen until new data arrives.",
      ["useMetrics uses placeholderData: keepPreviousData", "Loading skeleton only on first load"],
      ["react query", "ui flicker"], ["src/features/metrics/useMetrics.ts"], ["src/features/metrics/useMetrics.ts"])
    O(7, 2, "discovery", "API client has no request timeout", "A hung backend leaves spinners forever",
      "fetch has no default timeout, and the client never aborted requests, so when the metrics backend hung the UI spun indefinitely.",
      ["src/api/client.ts apiFetch() has no AbortSignal", "Backend p99 is 1.2s; hangs seen during deploys"],
      ["timeout", "http client"], ["src/api/client.ts"], [])
    O(8, 2, "change", "Added a 15s timeout to the API client", "AbortSignal.timeout combined with caller signals",
      "apiFetch now combines React Query's abort signal with AbortSignal.timeout(15000) using AbortSignal.any, and maps the resulting TimeoutError to a typed ApiTimeoutError shown as a toast.",
      ["src/api/client.ts DEFAULT_TIMEOUT_MS = 15000", "AbortSignal.any([signal, AbortSignal.timeout(15000)])", "ApiTimeoutError class in src/api/errors.ts"],
      ["timeout", "http client", "abort"], ["src/api/client.ts"], ["src/api/client.ts", "src/api/errors.ts"])

    O(9, 3, "decision", "Chose Zustand over Redux Toolkit for UI state", "Server state stays in TanStack Query",
      "Once server data moved into React Query, the Redux store only held filters, sidebar state and theme. The team picked Zustand because it needs no provider or action boilerplate for that little state and its selectors avoid re-rendering the whole tree.",
      ["Redux store only had 3 slices left", "Zustand 4.5 chosen; Jotai considered but atoms felt too granular", "React Query remains the server-state cache"],
      ["state management", "library choice", "zustand"], ["src/store/index.ts"], [])
    O(10, 3, "refactor", "Migrated filters slice to a Zustand store", "src/stores/filters.ts",
      "The filters slice, its selectors and the dispatch calls across 14 components were replaced by useFilters with shallow selectors.",
      ["src/stores/filters.ts create<FiltersState>()", "Removed src/store/filtersSlice.ts", "Components use useFilters(s => s.timeRange)"],
      ["refactor", "state management", "zustand"], ["src/store/filtersSlice.ts"], ["src/stores/filters.ts", "src/features/metrics/MetricsPage.tsx"])
    O(11, 3, "bugfix", "Fixed setState-during-render warning in Sidebar", "Store update called inside render",
      "After the migration the console showed Warning: Cannot update a component (`Sidebar`) while rendering a different component (`ServiceList`). ServiceList called setSelectedService during render when the list changed; moved it into a useEffect.",
      ["Warning: Cannot update a component (`Sidebar`) while rendering a different component (`ServiceList`)", "src/features/services/ServiceList.tsx"],
      ["react", "render warnings"], ["src/features/services/ServiceList.tsx"], ["src/features/services/ServiceList.tsx"])
    O(12, 3, "change", "Removed Redux dependencies", "Bundle 38 KB smaller gzipped",
      "With the last slice migrated, @reduxjs/toolkit and react-redux were removed and the Provider dropped from main.tsx.",
      ["pnpm remove @reduxjs/toolkit react-redux", "Main chunk -38 KB gzip"],
      ["dependencies", "bundle size"], ["package.json"], ["package.json", "src/main.tsx"])

    O(13, 4, "bugfix", "Time range picker sent the wrong day to the API", "startOfDay used browser local time",
      "Users in Asia picking 'yesterday' saw data for the day before. The picker computed startOfDay in local time then sent toISOString(), shifting the date; ranges are now built in UTC with date-fns-tz.",
      ["src/components/TimeRangePicker.tsx", "Uses fromZonedTime(startOfDay(d), 'UTC')", "API expects UTC ISO timestamps"],
      ["timezone", "dates"], ["src/components/TimeRangePicker.tsx"], ["src/components/TimeRangePicker.tsx", "src/lib/time.ts"])
    O(14, 4, "feature", "Filters synced to the URL query string", "Shareable dashboard links",
      "On-call engineers wanted to paste links with the same service and time range. The filters store now serialises to ?service=&from=&to= via useSearchParams.",
      ["src/stores/filters.ts serialize()/parse()", "src/hooks/useUrlFilters.ts"],
      ["url state", "routing"], ["src/stores/filters.ts"], ["src/hooks/useUrlFilters.ts", "src/stores/filters.ts"])
    O(15, 4, "bugfix", "Fixed infinite render loop in URL filter sync", "Maximum update depth exceeded",
      "useUrlFilters wrote to the URL whenever the store changed and read the URL into the store whenever it changed, producing Error: Maximum update depth exceeded. The hook now compares serialised values before writing either side.",
      ["Error: Maximum update depth exceeded. This can happen when a component calls setState inside useEffect", "src/hooks/useUrlFilters.ts compares serialize(state) === location.search"],
      ["react", "infinite loop", "url state"], ["src/hooks/useUrlFilters.ts"], ["src/hooks/useUrlFilters.ts"])
    O(16, 4, "change", "Unit tests for filter serialisation round-trip", "vitest table tests",
      "Added table-driven tests checking that parse(serialize(x)) equals x for relative and absolute ranges and multiple services.",
      ["src/stores/filters.test.ts 12 cases"],
      ["tests", "url state"], [], ["src/stores/filters.test.ts"])

    O(17, 5, "discovery", "Overview dashboard with 40 charts takes 6.5s to render", "Profiler shows Recharts SVG reconciliation",
      "React Profiler showed the overview page spending most of its time reconciling thousands of SVG path nodes from Recharts, with each poll re-rendering every chart.",
      ["Overview page: 40 charts x 3 series x 720 points", "Commit time 6.5s on a mid-range laptop", "Recharts renders one SVG element per point for dots"],
      ["performance", "charts", "profiling"], ["src/features/metrics/OverviewPage.tsx"], [])
    O(18, 5, "decision", "Switched charting from Recharts to Apache ECharts", "Canvas renderer handles dense time series",
      "Claude compared Recharts, uPlot and ECharts. ECharts was chosen because its canvas renderer copes with dense series and it still offers the tooltips, legends and zoom the team relies on; uPlot was faster but would require rebuilding those interactions.",
      ["echarts 5.5 with echarts-for-react 3", "uPlot rejected: minimal API, custom tooltips needed", "Recharts kept nowhere after migration"],
      ["charts", "library choice", "performance"], ["src/features/metrics/OverviewPage.tsx"], [])
    O(19, 5, "refactor", "Introduced TimeSeriesChart wrapper component", "Single place for ECharts options",
      "All metrics charts now go through src/components/charts/TimeSeriesChart.tsx, which builds the ECharts option from a MetricSeries[] prop and handles resize.",
      ["src/components/charts/TimeSeriesChart.tsx", "Props: series, unit, height, onZoom", "Uses ResizeObserver instead of window resize"],
      ["refactor", "charts"], [], ["src/components/charts/TimeSeriesChart.tsx", "src/features/metrics/OverviewPage.tsx"])
    O(20, 5, "change", "Overview render time dropped from 6.5s to 1.4s", "After ECharts migration and memoised options",
      "With canvas charts and useMemo on the option objects, the overview page commits in 1.4s and polling no longer blocks input.",
      ["Commit 6.5s -> 1.4s", "useMemo keyed on series reference", "sampling: 'lttb' for series over 1000 points"],
      ["performance", "charts"], ["src/components/charts/TimeSeriesChart.tsx"], ["src/components/charts/TimeSeriesChart.tsx"])

    O(21, 6, "decision", "Replace metrics polling with a WebSocket stream", "Backend now exposes /ws/metrics",
      "Polling 40 charts every 5s cost 480 requests a minute per open tab. The backend team added a WebSocket endpoint that pushes new points, and the dashboard will subscribe instead of polling.",
      ["wss://pulse-api.internal/ws/metrics", "Subscription message {type:'subscribe', series:[...]}", "Polling stays as fallback"],
      ["live updates", "websocket"], ["src/features/metrics/useMetrics.ts"], [])
    O(22, 6, "feature", "useLiveMetrics hook over WebSocket", "Merges pushed points into the React Query cache",
      "The hook opens one socket, subscribes for the visible series and appends incoming points to the cached query data via queryClient.setQueryData.",
      ["src/features/metrics/useLiveMetrics.ts", "queryClient.setQueryData(['metrics', id], append)", "Trims points older than the time window"],
      ["live updates", "websocket", "react query"], [], ["src/features/metrics/useLiveMetrics.ts"])
    O(23, 6, "bugfix", "WebSocket reconnect storm after backend deploy", "All tabs reconnected every 100ms",
      "When the backend restarted, each tab tried to reconnect immediately in a tight loop, hammering the new pods. Reconnects now use exponential backoff from 1s to 30s with full jitter.",
      ["src/lib/reconnect.ts backoff(attempt) = random(0, min(30000, 1000 * 2**attempt))", "Attempt counter resets after 60s connected"],
      ["websocket", "retry", "backoff"], ["src/features/metrics/useLiveMetrics.ts"], ["src/lib/reconnect.ts", "src/features/metrics/useLiveMetrics.ts"])
    O(24, 6, "bugfix", "TypeScript error after tightening types in useLiveMetrics", "TS2322 undefined not assignable",
      "tsc reported error TS2322: Type 'MetricPoint[] | undefined' is not assignable to type 'MetricPoint[]' where the cached data might not exist yet. The updater now returns early when old data is undefined.",
      ["error TS2322: Type 'MetricPoint[] | undefined' is not assignable to type 'MetricPoint[]'", "setQueryData updater: old => old ? [...old, p] : old"],
      ["typescript", "type errors"], ["src/features/metrics/useLiveMetrics.ts"], ["src/features/metrics/useLiveMetrics.ts"])

    O(25, 7, "change", "Enabled strict mode and noUncheckedIndexedAccess", "tsconfig.json",
      "strict had been off since the project start. Turning it on surfaced 143 errors, mostly implicit any in event handlers and unchecked array indexing; all fixed in one pass.",
      ["tsconfig.json \"strict\": true, \"noUncheckedIndexedAccess\": true", "143 errors fixed"],
      ["typescript", "configuration"], ["tsconfig.json"], ["tsconfig.json"])
    O(26, 7, "refactor", "API types generated from the OpenAPI spec", "openapi-typescript replaces hand-written interfaces",
      "Hand-written response types had drifted from the backend. src/api/schema.d.ts is now generated by openapi-typescript in a pnpm gen:api script and checked in.",
      ["pnpm gen:api -> openapi-typescript https://pulse-api.internal/openapi.json -o src/api/schema.d.ts", "Removed src/api/types.ts"],
      ["refactor", "openapi", "typescript"], ["src/api/types.ts"], ["src/api/schema.d.ts", "package.json"])
    O(27, 7, "bugfix", "React Query retried 401 and 403 responses three times", "Slow redirect to login on expired session",
      "The default retry: 3 meant an expired session waited through three backoff retries (about 7s) before redirecting to login. The retry option is now a function that never retries 4xx and retries 5xx and network errors twice.",
      ["src/api/queryClient.ts retry: (count, err) => !(err instanceof ApiError && err.status < 500) && count < 2", "Redirect to login now immediate"],
      ["retry", "react query", "authentication"], ["src/api/queryClient.ts"], ["src/api/queryClient.ts"])
    O(28, 7, "bugfix", "Parallel 401s triggered several token refreshes at once", "Single-flight refresh promise",
      "When the access token expired, every in-flight request got 401 and each started its own refresh, and Keycloak rejected the reused refresh token with invalid_grant. A shared refresh promise now makes concurrent requests wait for one refresh.",
      ["Keycloak error: invalid_grant 'Token is not active'", "src/auth/refresh.ts let inflight: Promise<User> | null", "client.ts retries the original request once after refresh"],
      ["authentication", "race condition", "token refresh"], ["src/api/client.ts", "src/auth/oidc.ts"], ["src/auth/refresh.ts", "src/api/client.ts"])

    O(29, 8, "change", "Upgraded Vite 4 to 5 and @vitejs/plugin-react 4.3", "Node 18+ required",
      "Vite 5 brings Rollup 4 and faster cold starts. Dev server cold start went from 2.9s to 1.7s.",
      ["vite 5.3.1, @vitejs/plugin-react 4.3.1", "Cold start 2.9s -> 1.7s"],
      ["dependency upgrade", "vite"], ["vite.config.ts", "package.json"], ["package.json", "pnpm-lock.yaml"])
    O(30, 8, "bugfix", "Vite could not resolve @/ imports after the upgrade", "Alias pointed at a relative string",
      "The dev server failed with [vite] Internal server error: Failed to resolve import \"@/components/charts/TimeSeriesChart\" from \"src/features/metrics/OverviewPage.tsx\". The alias now uses fileURLToPath(new URL('./src', import.meta.url)).",
      ["[vite] Internal server error: Failed to resolve import \"@/components/charts/TimeSeriesChart\"", "vite.config.ts resolve.alias {'@': fileURLToPath(new URL('./src', import.meta.url))}"],
      ["vite", "module resolution", "build"], ["vite.config.ts"], ["vite.config.ts"])
    O(31, 8, "change", "Node 20 for local development and CI", ".nvmrc and setup-node",
      "Node 18 leaves maintenance soon; .nvmrc now says 20.15 and CI uses actions/setup-node with node-version-file.",
      [".nvmrc: 20.15.0", "ci.yml setup-node node-version-file: .nvmrc"],
      ["tooling", "node version"], [], [".nvmrc", ".github/workflows/ci.yml"])
    O(32, 8, "bugfix", "Flaky Playwright test waiting for chart canvas", "Canvas existed before data was drawn",
      "e2e/overview.spec.ts clicked a chart point before ECharts finished its first render and failed about 10% of runs on CI. TimeSeriesChart now sets data-ready='true' after the 'finished' event and the test waits for that attribute.",
      ["e2e/overview.spec.ts waits for [data-ready=true]", "ECharts 'finished' event sets the attribute", "Retries on CI set to 0 to surface flakes"],
      ["tests", "playwright", "flaky test"], ["e2e/overview.spec.ts"], ["e2e/overview.spec.ts", "src/components/charts/TimeSeriesChart.tsx"])

    O(33, 9, "feature", "CSV export for the alerts table", "Exports current filters, not just the visible page",
      "The export button fetches all matching alerts through the cursor API and builds a CSV in the browser with a Blob download.",
      ["src/features/alerts/exportCsv.ts", "Streams pages of 500 until cursor is null"],
      ["csv export", "alerts"], ["src/features/alerts/AlertsTable.tsx"], ["src/features/alerts/exportCsv.ts", "src/features/alerts/AlertsTable.tsx"])
    O(34, 9, "bugfix", "CSV export broke on commas and umlauts in Excel", "Missing quoting and BOM",
      "Alert messages with commas split into extra columns and German text showed as mojibake (Ã¼) when opened in Excel. Fields are now quoted per RFC 4180 and the file starts with a UTF-8 BOM.",
      ["exportCsv.ts escapes quotes by doubling them", "Prepends '\\uFEFF' BOM", "Excel on Windows assumes cp1252 without BOM"],
      ["csv export", "encoding"], ["src/features/alerts/exportCsv.ts"], ["src/features/alerts/exportCsv.ts"])
    O(35, 9, "feature", "Virtualised alerts table for 10k rows", "@tanstack/react-virtual",
      "Rendering 10,000 alert rows froze the tab for several seconds. The table now renders only visible rows with @tanstack/react-virtual; scrolling stays at 60fps.",
      ["@tanstack/react-virtual 3.8", "Row height fixed at 36px", "Initial render 3.4s -> 90ms for 10k rows"],
      ["performance", "virtualization", "tables"], ["src/features/alerts/AlertsTable.tsx"], ["src/features/alerts/AlertsTable.tsx"])
    O(36, 9, "discovery", "Alerts API paginates with an opaque cursor, max 500 per page", "limit above 500 returns 400",
      "Requesting limit=1000 returned HTTP 400 {\"error\":\"limit must be <= 500\"}. Pagination is cursor-based only; there is no total count.",
      ["GET /alerts?cursor=...&limit=500", "400 when limit > 500", "No total count header"],
      ["pagination", "api"], ["src/api/schema.d.ts"], [])

    O(37, 10, "bugfix", "Chart axis labels unreadable in dark mode", "ECharts theme not switched",
      "Dark mode changed the page background but charts kept dark grey axis labels. Registered 'pulse-light' and 'pulse-dark' ECharts themes and the wrapper re-inits with the right theme when it changes.",
      ["src/components/charts/theme.ts registerTheme('pulse-dark', ...)", "echarts.init(el, theme) on theme change"],
      ["dark mode", "charts", "theming"], ["src/components/charts/theme.ts"], ["src/components/charts/theme.ts"])
    O(38, 10, "feature", "Dark mode toggle persisted in localStorage", "zustand persist middleware",
      "A theme store with the persist middleware remembers the choice; 'system' follows prefers-color-scheme.",
      ["src/stores/theme.ts persist(..., {name: 'pulse-theme'})", "Values: 'light' | 'dark' | 'system'"],
      ["dark mode", "zustand", "persistence"], [], ["src/stores/theme.ts", "src/components/ThemeToggle.tsx"])
    O(39, 10, "bugfix", "Flash of light theme on page load", "Persisted store rehydrates after first paint",
      "Dark-mode users saw a white flash on every load because zustand rehydrates after React mounts. A tiny inline script in index.html reads localStorage and sets data-theme on <html> before the bundle loads.",
      ["index.html inline script sets document.documentElement.dataset.theme", "Reads key 'pulse-theme'"],
      ["dark mode", "fouc"], ["index.html"], ["index.html"])
    O(40, 10, "change", "Design tokens as CSS custom properties", "Colors and spacing in src/styles/tokens.css",
      "Hard-coded hex colors in 60 components were replaced by CSS variables so themes only redefine tokens.",
      ["src/styles/tokens.css --color-bg, --color-fg, --space-2", "[data-theme=dark] overrides"],
      ["theming", "css"], [], ["src/styles/tokens.css"])

    O(41, 11, "bugfix", "Memory leak from undisposed ECharts instances", "Heap grew ~30 MB per navigation",
      "Navigating between dashboards kept growing the JS heap; heap snapshots showed detached canvases retained by ECharts. TimeSeriesChart now calls chart.dispose() in the effect cleanup and disconnects its ResizeObserver.",
      ["Heap +30 MB per navigation, 600 MB after 20 switches", "useEffect cleanup: chart.dispose(); observer.disconnect()"],
      ["memory leak", "charts"], ["src/components/charts/TimeSeriesChart.tsx"], ["src/components/charts/TimeSeriesChart.tsx"])
    O(42, 11, "bugfix", "Metrics WebSocket stayed open after logout", "Server kept pushing to a logged-out tab",
      "Logging out did not close the socket, so the next user on a shared kiosk briefly saw the previous subscriptions. The auth store's logout now triggers closeLiveConnection().",
      ["src/auth/oidc.ts logout calls closeLiveConnection()", "Socket closed with code 1000"],
      ["websocket", "authentication", "security"], ["src/features/metrics/useLiveMetrics.ts"], ["src/auth/oidc.ts", "src/features/metrics/useLiveMetrics.ts"])
    O(43, 11, "change", "Upload source maps to Sentry from CI", "@sentry/vite-plugin",
      "Production stack traces were minified. The Sentry Vite plugin uploads source maps on release builds and deletes them from dist afterwards.",
      ["vite.config.ts sentryVitePlugin({org:'acme', project:'pulse-web'})", "SENTRY_AUTH_TOKEN CI secret", "sourcemap: 'hidden'"],
      ["observability", "sentry", "build"], ["vite.config.ts"], ["vite.config.ts", ".github/workflows/ci.yml"])
    O(44, 11, "discovery", "ECharts is 1 MB of the main bundle", "rollup-plugin-visualizer report",
      "The bundle report showed echarts imported as a whole from 'echarts', pulling in maps, 3D and every chart type although only line and bar are used.",
      ["dist/assets/index-*.js 1.9 MB (610 KB gzip)", "echarts accounts for ~1.0 MB"],
      ["bundle size", "charts"], ["vite.config.ts"], [])

    O(45, 12, "change", "Tree-shaken ECharts imports cut the bundle from 1.9 MB to 1.1 MB", "echarts/core with explicit components",
      "A src/lib/echarts.ts module registers only LineChart, BarChart, grid, tooltip, legend, dataZoom and the canvas renderer. Main bundle went from 1.9 MB to 1.1 MB (610 KB to 360 KB gzip).",
      ["src/lib/echarts.ts echarts.use([LineChart, BarChart, GridComponent, TooltipComponent, LegendComponent, DataZoomComponent, CanvasRenderer])", "1.9 MB -> 1.1 MB raw"],
      ["bundle size", "performance", "tree shaking"], ["src/components/charts/TimeSeriesChart.tsx"], ["src/lib/echarts.ts", "src/components/charts/TimeSeriesChart.tsx"])
    O(46, 12, "decision", "Switched live metrics from WebSocket to Server-Sent Events", "Corporate proxies were killing WebSocket connections",
      "Several customer sites behind Zscaler and Blue Coat proxies never received live points because the upgrade request was dropped. The team moved to SSE: it is plain HTTP, passes through those proxies, and the data only flows server-to-client anyway.",
      ["Backend endpoint GET /stream/metrics (text/event-stream)", "WebSocket code path removed", "Proxies returned 403 or closed on Upgrade"],
      ["live updates", "server-sent events", "websocket"], ["src/features/metrics/useLiveMetrics.ts"], [])
    O(47, 12, "feature", "useLiveMetrics rewritten with EventSource", "Resumes with Last-Event-ID",
      "The hook now uses EventSource; the browser reconnects automatically and sends Last-Event-ID so the server replays missed points. The custom reconnect backoff module was deleted.",
      ["src/features/metrics/useLiveMetrics.ts new EventSource('/stream/metrics?series=...')", "Deleted src/lib/reconnect.ts", "Server sends retry: 5000"],
      ["live updates", "server-sent events"], ["src/features/metrics/useLiveMetrics.ts"], ["src/features/metrics/useLiveMetrics.ts"])
    O(48, 12, "bugfix", "Only six dashboards could stream at once", "HTTP/1.1 per-origin connection limit",
      "With one EventSource per chart group, the seventh tab hung because browsers allow six connections per origin over HTTP/1.1. All series are now multiplexed into a single stream per tab, and the ingress was switched to HTTP/2.",
      ["One EventSource per tab, series listed in query string", "ingress nginx http2 enabled"],
      ["server-sent events", "connection limits"], ["src/features/metrics/useLiveMetrics.ts"], ["src/features/metrics/useLiveMetrics.ts"])

    O(49, 13, "feature", "Internationalisation with react-i18next", "English and German",
      "Strings were extracted into src/locales/{en,de}/common.json and components use the useTranslation hook. Language follows the browser with a manual override.",
      ["i18next 23, react-i18next 14", "src/i18n.ts init with i18next-browser-languagedetector"],
      ["i18n", "localization"], [], ["src/i18n.ts", "src/locales/en/common.json", "src/locales/de/common.json"])
    O(50, 13, "bugfix", "Numbers formatted with English separators in German UI", "Hard-coded toFixed()",
      "Metric values showed 1,234.5 in German. Formatting now goes through Intl.NumberFormat with the i18n language, giving 1.234,5.",
      ["src/lib/format.ts formatNumber(value, lang)", "Replaced 23 toFixed() calls"],
      ["i18n", "number formatting"], ["src/lib/format.ts"], ["src/lib/format.ts"])
    O(51, 13, "bugfix", "Alerts table crashed when the API returned 204 No Content", "Response body undefined",
      "For an empty service the alerts endpoint returns 204, and apiFetch returned undefined, so AlertsTable crashed with TypeError: Cannot read properties of undefined (reading 'map'). apiFetch now returns null for 204 and the table treats it as an empty list.",
      ["TypeError: Cannot read properties of undefined (reading 'map')", "src/api/client.ts returns null when response.status === 204"],
      ["error handling", "http status"], ["src/features/alerts/AlertsTable.tsx", "src/api/client.ts"], ["src/api/client.ts", "src/features/alerts/AlertsTable.tsx"])
    O(52, 13, "change", "API mocked with MSW in component tests", "Replaced ad-hoc vi.mock of the client",
      "Tests used vi.mock on apiFetch, which skipped the 204 handling that just broke. Mock Service Worker now intercepts fetch so tests exercise the real client.",
      ["msw 2.3, src/test/handlers.ts", "setupServer in src/test/setup.ts"],
      ["tests", "mocking"], ["src/test/setup.ts"], ["src/test/handlers.ts", "src/test/setup.ts"])

    O(53, 14, "refactor", "Route-level code splitting with React.lazy", "Each feature route is its own chunk",
      "Routes in src/routes.tsx now lazy-load their page components behind Suspense with a skeleton fallback.",
      ["src/routes.tsx const AlertsPage = lazy(() => import('./features/alerts/AlertsPage'))", "6 route chunks"],
      ["code splitting", "refactor"], ["src/routes.tsx"], ["src/routes.tsx"])
    O(54, 14, "change", "Initial load LCP improved from 3.1s to 1.6s", "Lighthouse on throttled 4G profile",
      "With route chunks and the slimmer charts bundle, the landing page downloads 420 KB instead of 1.1 MB of JS.",
      ["LCP 3.1s -> 1.6s", "Initial JS 1.1 MB -> 420 KB"],
      ["performance", "web vitals"], [], [])
    O(55, 14, "bugfix", "Stale tabs failed to load route chunks after a deploy", "Failed to fetch dynamically imported module",
      "Users with the app open during a deploy got TypeError: Failed to fetch dynamically imported module when navigating, because old hashed chunks were deleted. A lazyWithReload helper reloads the page once when a chunk import fails.",
      ["TypeError: Failed to fetch dynamically imported module: https://pulse.acme.io/assets/AlertsPage-3f9a.js", "src/lib/lazyWithReload.ts uses sessionStorage flag to avoid loops"],
      ["code splitting", "deployment", "error handling"], ["src/routes.tsx"], ["src/lib/lazyWithReload.ts", "src/routes.tsx"])
    O(56, 14, "change", "Default React Query staleTime 30s and gcTime 5 min", "Fewer refetches on tab focus",
      "Every window focus refetched all queries. Non-live queries now default to staleTime 30s; live metrics are updated by the stream anyway.",
      ["src/api/queryClient.ts defaultOptions.queries.staleTime = 30_000, gcTime = 300_000", "refetchOnWindowFocus left true"],
      ["react query", "caching"], ["src/api/queryClient.ts"], ["src/api/queryClient.ts"])

    Q("paraphrase", "the page with lots of graphs took ages to appear", [17, 18, 20])
    Q("paraphrase", "people at customer offices behind a corporate firewall never saw realtime numbers", [46, 47])
    Q("paraphrase", "browser tab kept eating more and more RAM as I clicked between boards", [41])
    Q("paraphrase", "logging in again after the session expired took several seconds", [27])
    Q("file", "what did we change in src/api/client.ts for slow requests", [8])
    Q("file", "src/lib/echarts.ts imports", [45])
    Q("file", "problems in useUrlFilters.ts", [14, 15])
    Q("error", "Maximum update depth exceeded", [15])
    Q("error", "Failed to fetch dynamically imported module", [55])
    Q("error", "Cannot read properties of undefined (reading 'map')", [51])
    Q("error", "[vite] Internal server error: Failed to resolve import \"@/components", [30])
    Q("decision", "why zustand and not redux", [9])
    Q("decision", "why did we go with echarts over uplot", [18])
    Q("keyword", "csv excel umlats", [34])
    Q("keyword", "websocket reconnect backoff", [23])
    Q("keyword", "token refresh invalid_grant", [28])
    Q("temporal", "how does the dashboard receive live metrics now", [46, 47])
    Q("temporal", "what is the latest bundle size after the chart library work", [54, 45])
