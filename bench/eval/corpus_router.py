"""The own eval's hand-written corpus, courier-router: Go 1.21+ gRPC service on Kubernetes
(Helm, Kafka, pgx). ``write_dataset`` calls ``add`` in the corpus's order; the records are
as they were written, one per line."""

from bench.eval.dataset_spec import O, Q, project


def add():
    # ---------------------------------------------------------------------------
    # 4. courier-router: Go 1.21+ gRPC service on Kubernetes (Helm, Kafka, pgx)
    # ---------------------------------------------------------------------------
    project("router", "/home/dev/courier-router", "2026-06-23", 14)

    O(1, 1, "discovery", "Mapped the courier-router service layout", "gRPC service with grpc-gateway REST facade",
      "The service picks carriers and routes for shipments. cmd/router/main.go wires config, the pgx pool and the gRPC server; business logic is in internal/routing and carrier integrations in internal/carriers.",
      ["api/proto/router/v1/router.proto defines RouterService", "internal/store uses pgx v5 pgxpool", "grpc-gateway v2 serves /v1/* REST"],
      ["project structure", "go", "grpc"], ["cmd/router/main.go", "internal/routing/service.go", "api/proto/router/v1/router.proto"], [])
    O(2, 1, "discovery", "Helm chart deploys 3 replicas behind an internal ingress", "deploy/helm/router",
      "The chart has deployment, service, ingress and configmap templates. values-prod.yaml sets replicaCount 3 and no resource requests.",
      ["deploy/helm/router/values-prod.yaml replicaCount: 3", "No resources.requests set", "Ingress class nginx-internal"],
      ["kubernetes", "helm"], ["deploy/helm/router/templates/deployment.yaml", "deploy/helm/router/values-prod.yaml"], [])
    O(3, 1, "bugfix", "go vet copylocks warning on RateTable", "Struct with sync.Mutex passed by value",
      "go vet reported internal/routing/rates.go:42:9: Lookup passes lock by value: routing.RateTable contains sync.RWMutex. The methods now use pointer receivers.",
      ["rates.go:42:9: Lookup passes lock by value: routing.RateTable contains sync.RWMutex", "func (t *RateTable) Lookup(...)"],
      ["go vet", "mutex", "static analysis"], ["internal/routing/rates.go"], ["internal/routing/rates.go"])
    O(4, 1, "change", "Added golangci-lint configuration", "errcheck, govet, staticcheck, revive",
      "Lint ran with defaults locally and not at all in CI. .golangci.yml enables a fixed linter set and CI runs golangci-lint v1.59.",
      [".golangci.yml linters: errcheck, govet, staticcheck, revive, gosec", "timeout: 5m"],
      ["linting", "ci"], [], [".golangci.yml", ".github/workflows/ci.yml"])

    O(5, 2, "bugfix", "Pods in CrashLoopBackOff when the database was slow", "Liveness probe checked Postgres",
      "During a slow RDS failover every pod was restarted repeatedly because /healthz pinged the database and the liveness probe failed after 1s. Liveness now only checks the process (/livez) while readiness (/readyz) includes the DB ping.",
      ["kubectl get pods: router-7c9f... 0/1 CrashLoopBackOff", "Liveness: GET /livez (no dependencies)", "Readiness: GET /readyz pings DB with 500ms timeout"],
      ["kubernetes", "health checks", "probes"], ["internal/health/health.go", "deploy/helm/router/templates/deployment.yaml"], ["internal/health/health.go", "deploy/helm/router/templates/deployment.yaml"])
    O(6, 2, "change", "Readiness probe timeoutSeconds 1 -> 3", "failureThreshold 3, periodSeconds 5",
      "Readiness flapped under GC pauses with the 1s default timeout. Probe timing is now in values.yaml.",
      ["values.yaml probes.readiness.timeoutSeconds: 3", "failureThreshold: 3, periodSeconds: 5"],
      ["kubernetes", "probes", "timeout"], [], ["deploy/helm/router/values.yaml", "deploy/helm/router/templates/deployment.yaml"])
    O(7, 2, "discovery", "No graceful shutdown: in-flight requests dropped on deploy", "SIGTERM exits immediately",
      "main.go never handled SIGTERM, so rolling updates cut in-flight gRPC calls and clients saw UNAVAILABLE bursts during each deploy.",
      ["Clients log: rpc error: code = Unavailable desc = transport is closing", "Seen on every rollout"],
      ["graceful shutdown", "deployment"], ["cmd/router/main.go"], [])
    O(8, 2, "feature", "Graceful shutdown with preStop delay", "GracefulStop within 25s, terminationGracePeriodSeconds 30",
      "On SIGTERM the server marks itself not ready, waits for endpoints to update (preStop sleep 5), then calls grpcServer.GracefulStop and http.Server.Shutdown with a 25s deadline.",
      ["signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)", "preStop: exec sleep 5", "terminationGracePeriodSeconds: 30"],
      ["graceful shutdown", "kubernetes"], ["cmd/router/main.go"], ["cmd/router/main.go", "deploy/helm/router/templates/deployment.yaml"])

    O(9, 3, "bugfix", "Panic loading carrier rate tables", "assignment to entry in nil map",
      "Startup panicked with panic: assignment to entry in nil map at internal/routing/rates.go:88 when a carrier had no zones yet. The zones map is now initialised in NewRateTable.",
      ["panic: assignment to entry in nil map", "goroutine 1 [running]: internal/routing.(*RateTable).Load rates.go:88"],
      ["panic", "maps", "initialization"], ["internal/routing/rates.go"], ["internal/routing/rates.go"])
    O(10, 3, "feature", "In-memory carrier quote cache with 60s TTL", "Avoids repeated quote calls for the same lane",
      "Quotes for the same origin/destination/weight bucket are cached for 60 seconds, cutting carrier API calls by ~70% during peak.",
      ["internal/carriers/cache.go QuoteCache with TTL 60s", "Key: carrier|origin|dest|weightBucket"],
      ["caching", "carriers"], [], ["internal/carriers/cache.go"])
    O(11, 3, "bugfix", "Data race in the quote cache", "Found by go test -race",
      "go test -race ./... printed WARNING: DATA RACE: write at 0x00c000182030 by goroutine 41 ... internal/carriers.(*QuoteCache).Set. The eviction loop touched the map without the mutex; both now hold c.mu.",
      ["WARNING: DATA RACE ... (*QuoteCache).Set cache.go:57", "Eviction goroutine now locks c.mu"],
      ["data race", "concurrency", "tests"], ["internal/carriers/cache.go"], ["internal/carriers/cache.go"])
    O(12, 3, "change", "CI runs tests with -race", "go test -race -count=1 ./...",
      "The race detector only ran on laptops. CI now runs the full suite with -race, adding about 40s.",
      [".github/workflows/ci.yml: go test -race -count=1 ./...", "CGO_ENABLED=1 required for -race"],
      ["ci", "data race", "tests"], [], [".github/workflows/ci.yml"])

    O(13, 4, "bugfix", "Postgres refused connections: too many clients", "pgxpool defaults multiplied by replicas",
      "During a traffic spike the service logged failed to connect to `host=router-db user=router database=router`: server error (FATAL: sorry, too many clients already (SQLSTATE 53300)). Each pod opened up to 32 connections against max_connections=100.",
      ["FATAL: sorry, too many clients already (SQLSTATE 53300)", "RDS db.t4g.large max_connections = 100", "Temporary fix: pool_max_conns=10 in DATABASE_URL"],
      ["database", "connection pool", "postgres"], ["internal/store/pool.go"], ["internal/store/pool.go"])
    O(14, 4, "discovery", "pgxpool default MaxConns is max(4, runtime.NumCPU())", "32 on the 32-core nodes",
      "pgx v5 derives the default pool size from NumCPU, which inside containers sees the node's cores, not the CPU limit. On the new 32-core node group each pod could open 32 connections.",
      ["pgxpool.Config.MaxConns default = max(4, runtime.NumCPU())", "GOMAXPROCS also saw 32 cores"],
      ["connection pool", "containers", "cpu limits"], ["internal/store/pool.go"], [])
    O(15, 4, "decision", "Cap the pool at 10 per pod instead of adding PgBouncer", "Fewer moving parts for now",
      "Claude proposed PgBouncer but the team decided to cap pgxpool at 10 connections per pod, since 3-10 replicas x 10 stays under the limit and PgBouncer's transaction mode would break pgx's prepared statement cache.",
      ["MaxConns = 10, MinConns = 2", "PgBouncer rejected: transaction pooling conflicts with pgx statement cache", "Revisit if replicas exceed 10"],
      ["connection pool", "architecture", "pgbouncer"], ["internal/store/pool.go"], ["internal/store/pool.go"])
    O(16, 4, "change", "statement_timeout 5s on all router DB sessions", "Set via pgx RuntimeParams",
      "A runaway route query once held locks for minutes. Every connection now sets statement_timeout=5000 and idle_in_transaction_session_timeout=10000.",
      ["cfg.ConnConfig.RuntimeParams[\"statement_timeout\"] = \"5000\"", "idle_in_transaction_session_timeout = 10000"],
      ["timeout", "postgres"], ["internal/store/pool.go"], ["internal/store/pool.go"])

    O(17, 5, "feature", "gRPC client to carrier-api with retry service config", "Retries UNAVAILABLE up to 4 attempts",
      "The carrier-api client now uses a gRPC service config retry policy: maxAttempts 4, initialBackoff 0.2s, maxBackoff 2s, retryableStatusCodes [UNAVAILABLE].",
      ["internal/carriers/client.go grpc.WithDefaultServiceConfig(retryPolicyJSON)", "retryableStatusCodes: [\"UNAVAILABLE\"]"],
      ["retry", "grpc", "carriers"], [], ["internal/carriers/client.go"])
    O(18, 5, "bugfix", "Duplicate shipments booked at the carrier", "CreateShipment retried after a timeout that actually succeeded",
      "Some shipments were booked twice at FastFreight: our 2s deadline expired (DEADLINE_EXCEEDED) while the carrier completed the booking, and the caller retried. CreateShipment is now excluded from automatic retries and carries a request_id the carrier uses for deduplication.",
      ["rpc error: code = DeadlineExceeded desc = context deadline exceeded", "Service config retry now only applies to GetQuote and TrackShipment", "request_id = shipment UUID"],
      ["retry", "idempotency", "grpc"], ["internal/carriers/client.go"], ["internal/carriers/client.go", "internal/carriers/fastfreight.go"])
    O(19, 5, "change", "Per-method deadlines for carrier calls", "GetQuote 800ms, CreateShipment 5s",
      "A single 2s default fit neither method. Quotes use 800ms so the fan-out stays fast; bookings get 5s.",
      ["internal/carriers/client.go quoteTimeout = 800ms, createTimeout = 5s", "Configurable via CARRIER_CREATE_TIMEOUT"],
      ["timeout", "grpc", "carriers"], ["internal/carriers/client.go"], ["internal/carriers/client.go", "internal/config/config.go"])
    O(20, 5, "discovery", "carrier-api CreateShipment p99 is 1.9s", "From their Grafana dashboard",
      "FastFreight's booking path is slow at p99 1.9s, p999 4.2s, which explains the timeouts with the old 2s deadline.",
      ["p50 340ms, p99 1.9s, p999 4.2s"],
      ["latency", "carriers"], [], [])

    O(21, 6, "change", "Route optimisation p99 from 1.2s to 310ms", "Precomputed zone graph, fewer allocations",
      "pprof showed Dijkstra rebuilding the zone adjacency map on every request. The graph is now built once when rate tables load and shortest paths use a preallocated heap.",
      ["go tool pprof cpu.prof: 61% in buildAdjacency", "internal/routing/graph.go ZoneGraph built at load", "p99 1.2s -> 310ms"],
      ["performance", "profiling", "algorithms"], ["internal/routing/graph.go", "internal/routing/optimize.go"], ["internal/routing/graph.go", "internal/routing/optimize.go"])
    O(22, 6, "change", "sync.Pool for label rendering buffers", "Allocations per request 1.8 MB -> 220 KB",
      "Label PDFs allocated fresh bytes.Buffers; pooling them reduced GC cycles from 40/s to 9/s under load.",
      ["internal/labels/render.go bufPool sync.Pool", "GC cycles 40/s -> 9/s"],
      ["performance", "garbage collection"], ["internal/labels/render.go"], ["internal/labels/render.go"])
    O(23, 6, "change", "GOMEMLIMIT derived from the container memory limit", "automemlimit at 90%",
      "The Go runtime did not know about the cgroup limit, so heap could overshoot before GC kicked in. KimMachineGun/automemlimit sets GOMEMLIMIT to 90% of the limit and go.uber.org/automaxprocs fixes GOMAXPROCS.",
      ["import _ \"github.com/KimMachineGun/automemlimit\"", "import _ \"go.uber.org/automaxprocs\""],
      ["memory", "containers", "garbage collection"], ["cmd/router/main.go"], ["cmd/router/main.go", "go.mod"])
    O(24, 6, "bugfix", "Pods OOMKilled during bulk shipment import", "512Mi limit too small",
      "The nightly CSV import of 200k shipments pushed pods past 512Mi and they were OOMKilled (exit code 137). Memory limit raised to 768Mi and the import now streams rows instead of loading the file.",
      ["Last State: Terminated, Reason: OOMKilled, Exit Code: 137", "resources.limits.memory: 768Mi", "internal/imports/csv.go uses csv.Reader streaming"],
      ["memory", "kubernetes", "oom"], ["internal/imports/csv.go"], ["internal/imports/csv.go", "deploy/helm/router/values-prod.yaml"])

    O(25, 7, "feature", "Kafka consumer for shipment.events using franz-go", "Updates routing state on carrier status changes",
      "A consumer group 'router-events' reads shipment.events and updates shipment status and ETA.",
      ["github.com/twmb/franz-go v1.17", "internal/events/consumer.go", "Topic has 12 partitions"],
      ["kafka", "event consumer"], [], ["internal/events/consumer.go", "cmd/router/main.go"])
    O(26, 7, "bugfix", "Consumer group kept rebalancing", "Handler blocked on retries longer than the session timeout",
      "When the ETA service was down, the handler retried inline for minutes, the member missed heartbeats/poll deadlines and the group rebalanced continuously (REBALANCE_IN_PROGRESS). Processing no longer blocks on retries.",
      ["franz-go log: heartbeat errored, err: REBALANCE_IN_PROGRESS", "Inline retry loop removed from handler"],
      ["kafka", "rebalance", "retry"], ["internal/events/consumer.go"], ["internal/events/consumer.go"])
    O(27, 7, "decision", "Failed events go to retry topics and a DLQ instead of blocking retries", "shipment.events.retry -> shipment.events.dlq",
      "The team chose a retry topic plus dead-letter topic over in-consumer retries, because blocking a partition stalls all shipments behind one bad message and triggers rebalances.",
      ["Retry topic: shipment.events.retry (3 attempts)", "DLQ: shipment.events.dlq", "Attempt count in header x-attempt"],
      ["kafka", "retry", "dead letter queue"], ["internal/events/consumer.go"], [])
    O(28, 7, "change", "Commit offsets only after processing", "At-least-once delivery",
      "Autocommit was on, so a crash lost events. The consumer now disables autocommit and commits marked records after successful handling; handlers are idempotent on event id.",
      ["kgo.DisableAutoCommit(), cl.CommitRecords(ctx, recs...)", "processed_events table with unique event_id"],
      ["kafka", "delivery semantics"], ["internal/events/consumer.go"], ["internal/events/consumer.go", "migrations/0014_processed_events.up.sql"])

    O(29, 8, "change", "HorizontalPodAutoscaler on CPU 70%", "min 3, max 10 replicas",
      "Added an autoscaling/v2 HPA to handle morning peaks.",
      ["deploy/helm/router/templates/hpa.yaml averageUtilization: 70", "minReplicas 3, maxReplicas 10"],
      ["autoscaling", "kubernetes", "hpa"], [], ["deploy/helm/router/templates/hpa.yaml", "deploy/helm/router/values-prod.yaml"])
    O(30, 8, "bugfix", "HPA never scaled: missing CPU request", "failed to get cpu utilization",
      "kubectl describe hpa showed FailedGetResourceMetric: failed to get cpu utilization: missing request for cpu, so replicas stayed at 3 during the peak. The deployment now sets requests cpu 250m, memory 384Mi.",
      ["failed to get cpu utilization: missing request for cpu", "resources.requests: cpu 250m, memory 384Mi"],
      ["autoscaling", "kubernetes", "resources"], ["deploy/helm/router/templates/hpa.yaml"], ["deploy/helm/router/values-prod.yaml"])
    O(31, 8, "change", "PodDisruptionBudget minAvailable 2", "Protects against node drains",
      "A node pool upgrade drained two nodes at once and took all replicas down. A PDB keeps at least two pods available.",
      ["deploy/helm/router/templates/pdb.yaml minAvailable: 2"],
      ["kubernetes", "availability"], [], ["deploy/helm/router/templates/pdb.yaml"])
    O(32, 8, "bugfix", "Helm release stuck in pending-upgrade", "another operation is in progress",
      "A cancelled CI job left the release in pending-upgrade, and the next deploy failed with Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress. Claude rolled back with helm rollback router 41 and CI now uses --atomic --timeout 10m.",
      ["Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress", "helm history router showed revision 42 pending-upgrade", "CI: helm upgrade --install --atomic --timeout 10m"],
      ["helm", "deployment", "ci"], [".github/workflows/deploy.yml"], [".github/workflows/deploy.yml"])

    O(33, 9, "feature", "Database migrations run as a Helm pre-upgrade hook", "golang-migrate Job",
      "Migrations used to be applied by hand. A Job annotated helm.sh/hook: pre-install,pre-upgrade runs migrate -path /migrations -database $DATABASE_URL up before pods roll.",
      ["deploy/helm/router/templates/migrate-job.yaml", "migrate/migrate v4.17 image", "hook-weight -5"],
      ["database migration", "helm", "kubernetes"], [], ["deploy/helm/router/templates/migrate-job.yaml"])
    O(34, 9, "bugfix", "Migration job failed with a dirty database version", "Previous migration half-applied",
      "The hook failed with error: Dirty database version 17. Fix and force version. after migration 17 timed out halfway. Claude inspected schema_migrations, completed the missing statement manually, ran migrate force 17 and re-ran the upgrade.",
      ["error: Dirty database version 17. Fix and force version.", "migrate -database $DATABASE_URL force 17"],
      ["database migration", "postgres"], ["migrations/0017_shipment_eta.up.sql"], [])
    O(35, 9, "change", "Index migration split out to run without a transaction", "CREATE INDEX CONCURRENTLY",
      "Migration 17 failed because CREATE INDEX CONCURRENTLY cannot run inside a transaction block. The index moved into its own file 0018 and golang-migrate runs each file as-is (no implicit tx with multi-statement disabled).",
      ["ERROR: CREATE INDEX CONCURRENTLY cannot run inside a transaction block (SQLSTATE 25001)", "migrations/0018_idx_shipments_status.up.sql"],
      ["database migration", "index"], ["migrations/0017_shipment_eta.up.sql"], ["migrations/0017_shipment_eta.up.sql", "migrations/0018_idx_shipments_status.up.sql"])
    O(36, 9, "discovery", "Failed hook Jobs block the next migration run", "hook-delete-policy needed",
      "Helm does not recreate a Job with the same name, so the next upgrade failed with 'jobs.batch \"router-migrate\" already exists'. Added helm.sh/hook-delete-policy: before-hook-creation.",
      ["jobs.batch \"router-migrate\" already exists", "helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded"],
      ["helm", "database migration"], ["deploy/helm/router/templates/migrate-job.yaml"], ["deploy/helm/router/templates/migrate-job.yaml"])

    O(37, 10, "decision", "Autoscale on Kafka consumer lag with KEDA instead of CPU", "CPU did not track event backlog",
      "Event bursts built up lag for 20 minutes while CPU stayed at 40%, so the CPU HPA never reacted. The team moved scaling to a KEDA ScaledObject on consumer group lag, replacing the hand-written HPA.",
      ["KEDA kafka scaler, lagThreshold: 500", "hpa.yaml removed; KEDA creates its own HPA", "CPU trigger kept as secondary at 80%"],
      ["autoscaling", "keda", "kafka"], ["deploy/helm/router/templates/hpa.yaml"], [])
    O(38, 10, "change", "Added KEDA ScaledObject for router", "templates/scaledobject.yaml",
      "The chart now renders a ScaledObject with the kafka trigger reading bootstrap servers and consumer group from values.",
      ["deploy/helm/router/templates/scaledobject.yaml", "consumerGroup: router-events, topic: shipment.events", "minReplicaCount: 0, maxReplicaCount: 20"],
      ["autoscaling", "keda", "helm"], [], ["deploy/helm/router/templates/scaledobject.yaml", "deploy/helm/router/values-prod.yaml"])
    O(39, 10, "bugfix", "KEDA scaled beyond the partition count", "Replicas above 12 sat idle",
      "With maxReplicaCount 20, eight replicas had no partitions assigned. maxReplicaCount is now 12 to match shipment.events partitions.",
      ["Topic partitions: 12", "maxReplicaCount: 12"],
      ["autoscaling", "kafka", "keda"], ["deploy/helm/router/templates/scaledobject.yaml"], ["deploy/helm/router/values-prod.yaml"])
    O(40, 10, "change", "Raised pgxpool MaxConns from 10 to 25", "After moving to a larger RDS instance",
      "The database moved to db.r6g.xlarge with max_connections 1000, and pool waits showed up in traces at 10 connections. MaxConns is now 25 per pod (12 pods x 25 = 300).",
      ["MaxConns = 25 via DB_MAX_CONNS", "pgxpool stat EmptyAcquireCount was rising", "RDS max_connections 1000"],
      ["connection pool", "database"], ["internal/store/pool.go"], ["internal/store/pool.go", "deploy/helm/router/values-prod.yaml"])

    O(41, 11, "change", "OpenTelemetry tracing for gRPC and HTTP", "otelgrpc stats handler, OTLP to the collector",
      "Traces are exported over OTLP/gRPC to the in-cluster collector; sampling is parent-based with 10% root sampling.",
      ["otelgrpc.NewServerHandler()", "OTEL_EXPORTER_OTLP_ENDPOINT=otel-collector.observability:4317", "TraceIDRatioBased(0.1)"],
      ["tracing", "observability", "opentelemetry"], ["cmd/router/main.go"], ["cmd/router/main.go", "internal/telemetry/otel.go"])
    O(42, 11, "bugfix", "Traces broke at the Kafka boundary", "Context not propagated in message headers",
      "Spans from the producer and consumer ended up in separate traces. The producer injects traceparent into record headers and the consumer extracts it with a propagation.TextMapCarrier adapter.",
      ["internal/events/headers.go kafkaHeaderCarrier", "otel.GetTextMapPropagator().Inject(ctx, carrier)"],
      ["tracing", "kafka", "context propagation"], ["internal/events/consumer.go"], ["internal/events/headers.go", "internal/events/consumer.go"])
    O(43, 11, "change", "Custom latency histogram buckets", "5ms to 10s",
      "Default Prometheus buckets topped out at 10s but were coarse below 100ms where most quote calls land.",
      ["prometheus.ExponentialBucketsRange(0.005, 10, 14)", "router_request_duration_seconds"],
      ["metrics", "prometheus"], ["internal/telemetry/metrics.go"], ["internal/telemetry/metrics.go"])
    O(44, 11, "bugfix", "Prometheus memory blew up from a high-cardinality label", "shipment_id used as a metric label",
      "The Prometheus server went from 4 GB to 19 GB after a release that labelled router_quote_total with shipment_id, creating millions of series. The label was removed; per-shipment detail belongs in traces.",
      ["router_quote_total{carrier, shipment_id} -> {carrier, outcome}", "Active series 120k -> 3.1M -> 118k"],
      ["metrics", "prometheus", "cardinality"], ["internal/telemetry/metrics.go"], ["internal/telemetry/metrics.go"])

    O(45, 12, "change", "Upgraded Go 1.21 to 1.23", "go.mod and Dockerfile builder image",
      "go.mod go directive 1.23 and golang:1.23-bookworm builder. Test suite and race tests green.",
      ["go.mod: go 1.23.2", "Dockerfile FROM golang:1.23-bookworm AS build"],
      ["dependency upgrade", "go version"], ["go.mod"], ["go.mod", "Dockerfile"])
    O(46, 12, "discovery", "Go 1.22 loop variable semantics fixed a latent dispatcher bug", "Goroutines captured the last carrier",
      "With per-iteration loop variables, TestDispatchAllCarriers suddenly saw quotes from every carrier; before the upgrade goroutines in dispatchQuotes captured the shared loop variable and some requests went only to the last carrier.",
      ["internal/routing/dispatch.go for _, c := range carriers { go func() { quote(c) }() }", "Explains sporadic missing carriers in quote responses"],
      ["go version", "closures", "concurrency"], ["internal/routing/dispatch.go"], [])
    O(47, 12, "refactor", "Replaced gorilla/mux with the Go 1.22 ServeMux", "Method and wildcard patterns",
      "Admin HTTP routes now use patterns like mux.HandleFunc(\"GET /admin/carriers/{id}\", ...) and r.PathValue(\"id\"), removing the gorilla/mux dependency.",
      ["internal/admin/routes.go", "gorilla/mux removed from go.mod"],
      ["refactor", "http routing"], ["internal/admin/routes.go"], ["internal/admin/routes.go", "go.mod"])
    O(48, 12, "bugfix", "Admin endpoints returned 404 for trailing slashes after the router switch", "ServeMux pattern semantics",
      "gorilla/mux had StrictSlash(true); the std mux treats /admin/carriers/ and /admin/carriers differently, so existing scripts got 404. Added explicit redirects for the three affected routes.",
      ["GET /admin/carriers/ -> 404 after refactor", "Registered \"GET /admin/carriers/{$}\" with redirect"],
      ["http routing", "regression"], ["internal/admin/routes.go"], ["internal/admin/routes.go"])

    O(49, 13, "bugfix", "One failing carrier cancelled the whole quote fan-out", "errgroup context cancelled siblings",
      "Quote requests returned context canceled for all carriers when any one failed, because errgroup.WithContext cancels the shared context on the first error. The fan-out now collects per-carrier results and errors and returns partial quotes.",
      ["rpc error: code = Canceled desc = context canceled", "internal/routing/dispatch.go no longer uses errgroup.WithContext"],
      ["concurrency", "error handling", "carriers"], ["internal/routing/dispatch.go"], ["internal/routing/dispatch.go"])
    O(50, 13, "change", "Circuit breaker around the FastFreight client", "sony/gobreaker",
      "When FastFreight degrades, every quote waited for its 800ms deadline. A breaker opens after 5 consecutive failures and half-opens after 30s.",
      ["github.com/sony/gobreaker v1.0", "ReadyToTrip: ConsecutiveFailures >= 5, Timeout 30s"],
      ["circuit breaker", "resilience", "carriers"], ["internal/carriers/fastfreight.go"], ["internal/carriers/fastfreight.go"])
    O(51, 13, "bugfix", "TLS to carrier-api failed after their certificate rotation", "x509: certificate signed by unknown authority",
      "Calls failed with transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority; the carrier moved to a private CA. The CA bundle is mounted from a ConfigMap and loaded into the client's RootCAs.",
      ["x509: certificate signed by unknown authority", "ConfigMap carrier-ca mounted at /etc/router/ca", "CARRIER_CA_FILE env var"],
      ["tls", "certificates", "kubernetes"], ["internal/carriers/client.go"], ["internal/carriers/client.go", "deploy/helm/router/templates/deployment.yaml"])
    O(52, 13, "change", "NetworkPolicy restricting router egress", "Only DB, Kafka, carrier-api and DNS",
      "Security review asked for least-privilege egress. A NetworkPolicy allows only the required destinations; the first attempt forgot DNS on port 53/UDP and broke all lookups until fixed.",
      ["deploy/helm/router/templates/networkpolicy.yaml", "Allow kube-dns UDP/TCP 53"],
      ["kubernetes", "security", "network policy"], [], ["deploy/helm/router/templates/networkpolicy.yaml"])

    O(53, 14, "bugfix", "Scale-to-zero caused 90s delays for the first morning events", "KEDA minReplicaCount raised to 2",
      "Overnight the router scaled to zero, and the first events each morning waited for image pull and startup, about 90s, also leaving the gRPC API with no pods. minReplicaCount is now 2; the CPU trigger stays as secondary.",
      ["minReplicaCount: 0 -> 2", "gRPC API had no ready endpoints at 05:00"],
      ["autoscaling", "keda", "cold start"], ["deploy/helm/router/templates/scaledobject.yaml"], ["deploy/helm/router/values-prod.yaml"])
    O(54, 14, "change", "Runtime image switched to distroless static", "Image 1.1 GB -> 24 MB",
      "The final stage used the golang image. It is now gcr.io/distroless/static-debian12:nonroot with a CGO_ENABLED=0 build.",
      ["Dockerfile final stage distroless/static-debian12:nonroot", "Image 1.1 GB -> 24 MB", "runAsNonRoot: true"],
      ["docker", "image size", "security"], ["Dockerfile"], ["Dockerfile"])
    O(55, 14, "change", "Retry topic delays 30s, 5m, 30m", "Delay enforced by pausing partitions",
      "Retried events were re-consumed immediately and failed again. The retry consumer now honours a not-before header, pausing the partition until the delay passes.",
      ["x-not-before header", "Delays: 30s, 5m, 30m then DLQ", "cl.PauseFetchPartitions / ResumeFetchPartitions"],
      ["kafka", "retry", "backoff"], ["internal/events/retry.go"], ["internal/events/retry.go"])
    O(56, 14, "discovery", "DLQ replay tool in cmd/dlq-replay", "Existing but undocumented",
      "There is a small CLI that reads shipment.events.dlq and republishes selected events to the main topic, with --dry-run and --filter by event type.",
      ["go run ./cmd/dlq-replay --filter type=status_changed --dry-run", "Added docs/runbooks/dlq.md"],
      ["dead letter queue", "operations", "runbook"], ["cmd/dlq-replay/main.go"], ["docs/runbooks/dlq.md"])

    Q("paraphrase", "pods kept getting restarted whenever the database was sluggish", [5])
    Q("paraphrase", "the carrier ended up with the same parcel booked twice", [18])
    Q("paraphrase", "service did not add more instances during the morning rush even though it was overloaded", [30])
    Q("paraphrase", "clients saw errors every time we rolled out a new version", [7, 8])
    Q("file", "edits to internal/carriers/client.go", [17, 18, 19])
    Q("file", "why was migrations/0018_idx_shipments_status.up.sql added", [35])
    Q("error", "FATAL: sorry, too many clients already (SQLSTATE 53300)", [13])
    Q("error", "Dirty database version 17. Fix and force version.", [34])
    Q("error", "x509: certificate signed by unknown authority", [51])
    Q("error", "panic: assignment to entry in nil map", [9])
    Q("error", "UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress", [32])
    Q("decision", "why dead letter topic instead of retrying inside the kafka consumer", [27])
    Q("decision", "why didn't we add pgbouncer", [15])
    Q("keyword", "GOMEMLIMIT automaxprocs", [23])
    Q("keyword", "prometheus cardinality shipment_id", [44])
    Q("keyword", "gobreaker fastfreight", [50])
    Q("temporal", "how does the router autoscale now", [53, 37, 39])
    Q("temporal", "current pgx pool max conns", [40])
