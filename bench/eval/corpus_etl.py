"""The own eval's hand-written corpus, lakehouse-etl: Airflow 2.x + dbt on BigQuery.
``write_dataset`` calls ``add`` in the corpus's order; the records are as they were written,
one per line."""

from bench.eval.dataset_spec import O, Q, project


def add():
    # ---------------------------------------------------------------------------
    # 5. lakehouse-etl: Airflow 2.x + dbt on BigQuery
    # ---------------------------------------------------------------------------
    project("etl", "/home/dev/lakehouse-etl", "2026-06-30", 14)

    O(1, 1, "discovery", "Surveyed the Airflow + dbt repository", "dags/, dbt/, include/, docker-compose with CeleryExecutor",
      "Claude read through the data platform repo. Airflow DAGs live in dags/, shared Python helpers in include/, and a dbt project in dbt/ with staging, intermediate and marts layers targeting BigQuery.",
      ["Airflow 2.7.3 with CeleryExecutor in docker-compose", "dbt/models/{staging,intermediate,marts}", "22 DAGs, 310 dbt models"],
      ["project structure", "airflow", "dbt"], ["docker-compose.yml", "dbt/dbt_project.yml", "dags/daily_orders.py"], [])
    O(2, 1, "discovery", "dbt targets BigQuery dataset analytics_prod via a service account", "profiles.yml uses keyfile path from env",
      "Production runs use the service account dbt-runner@acme-data.iam with a JSON keyfile mounted into the worker; dev targets write to per-user datasets dbt_<user>.",
      ["dbt/profiles.yml method: service-account, keyfile: \"{{ env_var('DBT_KEYFILE') }}\"", "location: EU", "maximum_bytes_billed: 2000000000000"],
      ["bigquery", "dbt profiles", "credentials"], ["dbt/profiles.yml"], [])
    O(3, 1, "bugfix", "DAG import error: No module named 'include'", "Helpers not on the scheduler's PYTHONPATH",
      "After adding a helper module, the UI showed Broken DAG: [/opt/airflow/dags/daily_orders.py] ModuleNotFoundError: No module named 'include'. The compose file now mounts include/ under /opt/airflow/include and sets PYTHONPATH=/opt/airflow.",
      ["Broken DAG: ModuleNotFoundError: No module named 'include'", "docker-compose.yml PYTHONPATH=/opt/airflow", "Added .airflowignore for include/"],
      ["airflow", "imports", "docker"], ["docker-compose.yml"], ["docker-compose.yml", ".airflowignore"])
    O(4, 1, "change", "pre-commit with sqlfluff for dbt models", "BigQuery dialect, jinja templater",
      "SQL style drifted across authors. sqlfluff lint runs in pre-commit and CI with the dbt templater disabled for speed (jinja templater with dummy macros).",
      [".pre-commit-config.yaml sqlfluff 3.0.7", ".sqlfluff dialect = bigquery, templater = jinja"],
      ["linting", "sql style"], [], [".pre-commit-config.yaml", ".sqlfluff"])

    O(5, 2, "bugfix", "daily_orders loaded the wrong day when re-run", "Used datetime.now() instead of the data interval",
      "Clearing yesterday's run reloaded today's data because the extract query used datetime.now(). The query now uses {{ data_interval_start | ds }} so reruns and backfills are deterministic.",
      ["dags/daily_orders.py extract uses '{{ data_interval_start | ds }}'", "Removed datetime.now() from 4 DAGs"],
      ["airflow", "idempotency", "backfill"], ["dags/daily_orders.py"], ["dags/daily_orders.py", "dags/daily_refunds.py"])
    O(6, 2, "change", "catchup=False as the default for new DAGs", "Prevents surprise backfills on deploy",
      "A new DAG with start_date six months back queued 180 runs on deploy. The DAG template and airflow.cfg now default catchup to False.",
      ["AIRFLOW__SCHEDULER__CATCHUP_BY_DEFAULT=False", "dags/templates/dag_template.py catchup=False"],
      ["airflow", "scheduling", "backfill"], [], ["docker-compose.yml", "dags/templates/dag_template.py"])
    O(7, 2, "feature", "Ingest Salesforce opportunities to GCS", "simple_salesforce SOQL query, NDJSON output",
      "A new DAG pulls Opportunity and Account objects modified in the interval and writes NDJSON to gs://acme-lake/raw/salesforce/.",
      ["dags/ingest_salesforce.py", "include/salesforce.py query_all(soql)", "simple-salesforce 1.12"],
      ["ingestion", "salesforce", "gcs"], [], ["dags/ingest_salesforce.py", "include/salesforce.py"])
    O(8, 2, "bugfix", "Salesforce ingestion hit the daily API request limit", "REQUEST_LIMIT_EXCEEDED",
      "Paging through 2M opportunities with the REST API failed with REQUEST_LIMIT_EXCEEDED: TotalRequests Limit exceeded. The DAG now uses the Bulk API 2.0 query job, which costs a handful of calls.",
      ["SalesforceError: REQUEST_LIMIT_EXCEEDED: TotalRequests Limit exceeded.", "include/salesforce.py uses sf.bulk2.Opportunity.query()", "Org limit 100k requests / 24h"],
      ["salesforce", "api limits", "ingestion"], ["include/salesforce.py"], ["include/salesforce.py"])

    O(9, 3, "feature", "fct_events made incremental with merge on event_id", "materialized=incremental, unique_key=event_id",
      "The full rebuild of fct_events took 50 minutes. It is now incremental with the merge strategy, processing events newer than the max loaded timestamp.",
      ["dbt/models/marts/fct_events.sql config(materialized='incremental', unique_key='event_id', incremental_strategy='merge')", "partition_by event_date, cluster_by event_type"],
      ["dbt", "incremental models", "merge"], ["dbt/models/marts/fct_events.sql"], ["dbt/models/marts/fct_events.sql"])
    O(10, 3, "discovery", "Merge into fct_events scans the full 2.3 TB target", "About $11 per run",
      "INFORMATION_SCHEMA.JOBS showed each incremental run billing 2.3 TB because the MERGE join on event_id cannot prune partitions of the target.",
      ["total_bytes_billed 2.3 TB per run", "On-demand price ~$5/TB -> ~$11 per run, 4 runs/day"],
      ["bigquery", "cost", "incremental models"], ["dbt/models/marts/fct_events.sql"], [])
    O(11, 3, "bugfix", "unique test on fct_events.event_id failed", "Late duplicates from the tracking SDK",
      "dbt test failed: Failure in test unique_fct_events_event_id: Got 412 results, configured to fail if != 0. The SDK resends events on flaky networks; staging now dedupes with QUALIFY ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY received_at) = 1.",
      ["Failure in test unique_fct_events_event_id (models/marts/schema.yml)", "Got 412 results, configured to fail if != 0", "dbt/models/staging/stg_events.sql adds QUALIFY"],
      ["dbt tests", "deduplication"], ["dbt/models/staging/stg_events.sql"], ["dbt/models/staging/stg_events.sql"])
    O(12, 3, "change", "Source freshness checks on raw tables", "warn_after 6h, error_after 24h",
      "Stale sources went unnoticed for a weekend. sources.yml now declares loaded_at_field and freshness thresholds, and dbt source freshness runs before the daily build.",
      ["dbt/models/staging/sources.yml freshness: warn_after {count: 6, period: hour}", "error_after {count: 24, period: hour}"],
      ["dbt", "data freshness", "monitoring"], [], ["dbt/models/staging/sources.yml"])

    O(13, 4, "bugfix", "Sensors held all worker slots for hours", "GCSObjectExistenceSensor in poke mode",
      "Eight sensors waiting for partner files occupied all 8 Celery worker slots, so nothing else ran until noon. Sensors now use mode='reschedule' with poke_interval 300 and timeout 6h.",
      ["GCSObjectExistenceSensor(mode='reschedule', poke_interval=300, timeout=6*3600)", "Worker concurrency 8"],
      ["airflow", "sensors", "worker slots"], ["dags/partner_files.py"], ["dags/partner_files.py"])
    O(14, 4, "change", "Standard retry settings in default_args", "3 retries with exponential backoff up to 1h",
      "Transient BigQuery and GCS errors failed whole DAG runs. Shared default_args set retries=3, retry_delay=5 minutes, retry_exponential_backoff=True and max_retry_delay=1 hour.",
      ["include/defaults.py DEFAULT_ARGS", "retries=3, retry_delay=timedelta(minutes=5)", "retry_exponential_backoff=True, max_retry_delay=timedelta(hours=1)"],
      ["airflow", "retry", "backoff"], [], ["include/defaults.py"])
    O(15, 4, "bugfix", "dbt build task killed by execution_timeout", "AirflowTaskTimeout after 30 minutes",
      "The single BashOperator running dbt build failed with airflow.exceptions.AirflowTaskTimeout: Timeout, PID: 2817 on month-end when it took 41 minutes, and the retry rebuilt everything from scratch.",
      ["airflow.exceptions.AirflowTaskTimeout: Timeout, PID: 2817", "execution_timeout=timedelta(minutes=30)", "Month-end build 41 min"],
      ["airflow", "timeout", "dbt"], ["dags/dbt_daily.py"], [])
    O(16, 4, "decision", "Run dbt through astronomer-cosmos instead of one BashOperator", "Per-model tasks and retries",
      "One monolithic dbt build meant any failure retried all 310 models. The team chose Cosmos to render each model as its own Airflow task, so retries, timeouts and logs are per model, accepting extra scheduler load.",
      ["astronomer-cosmos 1.4", "Alternative considered: dbt retry after failed BashOperator", "Rejected dbt Cloud on cost"],
      ["dbt", "airflow", "orchestration", "library choice"], ["dags/dbt_daily.py"], [])

    O(17, 5, "change", "dbt_daily DAG rebuilt with a Cosmos DbtTaskGroup", "Models become Airflow tasks",
      "dags/dbt_daily.py now builds a DbtTaskGroup from the dbt project, with tests attached after each model.",
      ["DbtTaskGroup(project_config=ProjectConfig('/opt/airflow/dbt'), render_config=RenderConfig(test_behavior=TestBehavior.AFTER_EACH))"],
      ["dbt", "airflow", "cosmos"], ["dags/dbt_daily.py"], ["dags/dbt_daily.py"])
    O(18, 5, "bugfix", "Cosmos DAG timed out during parsing", "DagBag import timeout after 30s",
      "The scheduler logged airflow.exceptions.AirflowTaskTimeout: DagBag import timeout for /opt/airflow/dags/dbt_daily.py after 30.0s because Cosmos ran dbt ls at parse time. Switched to LoadMode.DBT_MANIFEST reading a prebuilt manifest.json.",
      ["DagBag import timeout for /opt/airflow/dags/dbt_daily.py after 30.0s", "RenderConfig(load_method=LoadMode.DBT_MANIFEST)", "Parse time 45s -> 2.1s"],
      ["airflow", "dag parsing", "cosmos"], ["dags/dbt_daily.py"], ["dags/dbt_daily.py"])
    O(19, 5, "change", "CI compiles the dbt manifest and ships it in the image", "dbt parse in the Docker build",
      "The Dockerfile runs dbt deps and dbt parse so target/manifest.json exists at runtime for Cosmos.",
      ["Dockerfile: RUN cd dbt && dbt deps && dbt parse", "manifest path /opt/airflow/dbt/target/manifest.json"],
      ["ci", "dbt", "docker"], ["Dockerfile"], ["Dockerfile"])
    O(20, 5, "discovery", "Scheduler re-parses every DAG file every 30 seconds", "min_file_process_interval default",
      "With 22 DAG files and heavy imports the scheduler spent most CPU parsing. min_file_process_interval was raised to 120s.",
      ["AIRFLOW__SCHEDULER__MIN_FILE_PROCESS_INTERVAL=120", "Scheduler CPU 90% -> 35%"],
      ["airflow", "scheduler", "performance"], ["docker-compose.yml"], ["docker-compose.yml"])

    O(21, 6, "bugfix", "BigQuery partition modification quota exceeded", "Hourly partitions on stg_web_sessions",
      "Loads started failing with Quota exceeded: Your table exceeded quota for Number of partition modifications to a column partitioned table. The hourly-partitioned staging table was rewritten by every micro-batch.",
      ["403 Quota exceeded: Your table exceeded quota for Number of partition modifications to a column partitioned table", "Limit 5000 modifications per day"],
      ["bigquery", "quotas", "partitioning"], ["dbt/models/staging/stg_web_sessions.sql"], [])
    O(22, 6, "change", "stg_web_sessions partitioned by day instead of hour", "Cuts partition modifications 24x",
      "Partition granularity changed to day and the micro-batch cadence to hourly appends.",
      ["partition_by={'field': 'session_start', 'data_type': 'timestamp', 'granularity': 'day'}"],
      ["bigquery", "partitioning"], ["dbt/models/staging/stg_web_sessions.sql"], ["dbt/models/staging/stg_web_sessions.sql"])
    O(23, 6, "change", "Upgraded dbt-core 1.7 to 1.8 with dbt-bigquery 1.8", "tests: renamed to data_tests:",
      "1.8 decouples adapters and adds unit tests. YAML 'tests:' keys were renamed to 'data_tests:' to silence deprecation warnings.",
      ["requirements.txt dbt-core==1.8.3, dbt-bigquery==1.8.2", "sed across 48 schema.yml files tests: -> data_tests:"],
      ["dependency upgrade", "dbt"], ["requirements.txt"], ["requirements.txt", "dbt/models/marts/schema.yml"])
    O(24, 6, "bugfix", "dbt failed with 'dbt_utils' is undefined in the worker image", "Packages not installed after upgrade",
      "Runs failed with Compilation Error in model int_orders_enriched: 'dbt_utils' is undefined because the rebuilt image no longer ran dbt deps and dbt_packages/ was gitignored.",
      ["Compilation Error ... 'dbt_utils' is undefined", "dbt/packages.yml dbt_utils 1.2.0", "Dockerfile runs dbt deps before dbt parse"],
      ["dbt", "packages", "docker"], ["Dockerfile", "dbt/packages.yml"], ["Dockerfile"])

    O(25, 7, "decision", "fct_events switched from merge to insert_overwrite", "Per-run scan 2.3 TB -> 40 GB",
      "Because MERGE could not prune the target, the team moved fct_events to the insert_overwrite strategy: whole event_date partitions are recomputed and replaced. Dedup moves entirely into staging, and unique_key is dropped.",
      ["incremental_strategy='insert_overwrite'", "Bytes billed per run 2.3 TB -> 40 GB", "Cost ~$44/day -> ~$0.80/day"],
      ["dbt", "incremental models", "bigquery", "cost"], ["dbt/models/marts/fct_events.sql"], ["dbt/models/marts/fct_events.sql"])
    O(26, 7, "change", "fct_events replaces only the last 3 days of partitions", "Static partitions list",
      "Using static partitions avoids the dynamic temp-table scan. The model replaces the partitions for the last 3 days, computed in a macro.",
      ["partitions=last_n_days(3) in dbt/macros/partitions.sql", "copy_partitions=true"],
      ["dbt", "partitioning"], ["dbt/models/marts/fct_events.sql"], ["dbt/models/marts/fct_events.sql", "dbt/macros/partitions.sql"])
    O(27, 7, "bugfix", "Events arriving more than 3 days late were dropped", "Weekly backfill DAG added",
      "Mobile clients offline for a week upload old events that fell outside the 3-day window. A weekly DAG rebuilds the last 14 days of fct_events with --vars '{lookback_days: 14}'.",
      ["dags/fct_events_backfill.py schedule='0 5 * * 0'", "dbt run -s fct_events --vars '{lookback_days: 14}'", "~0.4% of events arrive >3 days late"],
      ["late arriving data", "backfill"], [], ["dags/fct_events_backfill.py", "dbt/macros/partitions.sql"])
    O(28, 7, "change", "Set maximum_bytes_billed per dbt run", "Guards against accidental full scans",
      "The profile now caps each query at 500 GB; a model that exceeds it fails instead of silently costing money.",
      ["dbt/profiles.yml maximum_bytes_billed: 500000000000"],
      ["bigquery", "cost", "guardrails"], ["dbt/profiles.yml"], ["dbt/profiles.yml"])

    O(29, 8, "change", "Daily DAG moved from 02:00 to 04:00 UTC", "Postgres export lands around 03:10",
      "The daily dbt run often started before the nightly orders export finished, producing empty days. Schedule changed to '0 4 * * *'.",
      ["dags/dbt_daily.py schedule='0 4 * * *'", "Export finished between 02:50 and 03:25 over the last 30 days"],
      ["airflow", "scheduling"], ["dags/dbt_daily.py"], ["dags/dbt_daily.py"])
    O(30, 8, "bugfix", "DAGs shifted an hour after the DST change", "start_date in Europe/Berlin",
      "Two DAGs defined start_date with pendulum.datetime(..., tz='Europe/Berlin') ran an hour earlier after the clocks changed, again racing the export. All DAGs now use UTC.",
      ["pendulum.datetime(2026, 1, 1, tz='UTC')", "default_timezone = utc in airflow.cfg"],
      ["airflow", "timezone", "dst"], ["dags/daily_orders.py"], ["dags/daily_orders.py", "dags/dbt_daily.py"])
    O(31, 8, "feature", "Slack alerts on task failure", "on_failure_callback posts to #data-alerts",
      "Failures were only visible in the UI. A callback posts DAG, task, try number and log URL to Slack via the Slack webhook connection.",
      ["include/alerts.py slack_failure_callback(context)", "Connection id slack_data_alerts"],
      ["alerting", "slack", "airflow"], [], ["include/alerts.py", "include/defaults.py"])
    O(32, 8, "bugfix", "Slack flooded with 120 messages for one failed run", "Callback fired per task and per retry",
      "When BigQuery had an outage every Cosmos model task failed and retried, sending 120 alerts. The callback moved to the DAG-level on_failure_callback and fires only once per DAG run.",
      ["DAG(on_failure_callback=slack_failure_callback)", "Removed from default_args"],
      ["alerting", "slack", "noise"], ["include/alerts.py"], ["include/alerts.py", "include/defaults.py"])

    O(33, 9, "change", "Upgraded Airflow 2.7 to 2.9", "Constraints file for Python 3.11",
      "Installed apache-airflow==2.9.2 with the official constraints file and upgraded provider packages.",
      ["pip install apache-airflow==2.9.2 --constraint constraints-3.11.txt", "apache-airflow-providers-google 10.19"],
      ["dependency upgrade", "airflow"], ["requirements.txt"], ["requirements.txt", "Dockerfile"])
    O(34, 9, "bugfix", "airflow db migrate failed on a lock timeout", "Scheduler still running during the upgrade",
      "The metadata DB migration failed with sqlalchemy.exc.OperationalError: (psycopg2.errors.LockNotAvailable) canceling statement due to lock timeout because the old scheduler still held locks on task_instance. Stopping scheduler and workers first let it complete.",
      ["(psycopg2.errors.LockNotAvailable) canceling statement due to lock timeout", "Upgrade runbook: stop scheduler, workers, triggerer before airflow db migrate"],
      ["airflow", "database migration", "upgrade"], [], ["docs/runbooks/airflow-upgrade.md"])
    O(35, 9, "change", "Worker image moved to Python 3.11", "apache/airflow:2.9.2-python3.11",
      "The base image changed from python3.9; two DAGs needed small fixes for removed distutils usage.",
      ["Dockerfile FROM apache/airflow:2.9.2-python3.11", "Replaced distutils.util.strtobool in include/utils.py"],
      ["docker", "python version"], ["Dockerfile"], ["Dockerfile", "include/utils.py"])
    O(36, 9, "change", "Replaced schedule_interval with schedule", "Deprecation warnings in 2.9",
      "All DAG definitions now use the schedule argument; schedule_interval emits RemovedInAirflow3Warning.",
      ["RemovedInAirflow3Warning: Param `schedule_interval` is deprecated", "22 DAG files updated"],
      ["airflow", "deprecation"], [], ["dags/daily_orders.py", "dags/dbt_daily.py", "dags/ingest_salesforce.py"])

    O(37, 10, "feature", "SCD type 2 customer history with dbt snapshots", "snapshots/customers_snapshot.sql",
      "Finance needed customer attributes as of invoice date. A dbt snapshot tracks changes to the Postgres customers table.",
      ["dbt/snapshots/customers_snapshot.sql strategy='check', check_cols='all'", "dim_customers joins on dbt_valid_from/dbt_valid_to"],
      ["dbt snapshots", "scd2"], [], ["dbt/snapshots/customers_snapshot.sql", "dbt/models/marts/dim_customers.sql"])
    O(38, 10, "bugfix", "Snapshot created a new version of every customer each run", "check_cols='all' included a float score column",
      "The snapshot table grew by 1.4M rows per day. A lifetime_value FLOAT column changed in the last decimal on every export, so every row looked changed.",
      ["customers_snapshot grew 1.4M rows/day", "lifetime_value recomputed nightly upstream"],
      ["dbt snapshots", "data quality"], ["dbt/snapshots/customers_snapshot.sql"], ["dbt/snapshots/customers_snapshot.sql"])
    O(39, 10, "decision", "Snapshots use the timestamp strategy on updated_at", "Instead of check_cols",
      "The source table has a reliable updated_at maintained by a trigger, so the team chose strategy='timestamp' over listing check columns, which would need maintenance whenever columns are added.",
      ["strategy='timestamp', updated_at='updated_at'", "Trigger set_updated_at on customers table verified"],
      ["dbt snapshots", "scd2"], ["dbt/snapshots/customers_snapshot.sql"], ["dbt/snapshots/customers_snapshot.sql"])
    O(40, 10, "change", "First dbt unit tests for the revenue model", "dbt 1.8 unit_tests",
      "int_revenue_recognition has tricky proration; unit tests with given/expect rows cover annual, monthly and mid-period upgrade cases.",
      ["dbt/models/intermediate/_unit_tests.yml", "dbt test --select test_type:unit"],
      ["tests", "dbt unit tests"], ["dbt/models/intermediate/int_revenue_recognition.sql"], ["dbt/models/intermediate/_unit_tests.yml"])

    O(41, 11, "change", "stg_web_sessions build time cut from 14 to 3 minutes", "Clustering on user_id and partition filter",
      "The model scanned all history on each run. Adding cluster_by ['user_id'] and an incremental filter on the session_start partition reduced slot time by 78%.",
      ["cluster_by=['user_id']", "Build 14m -> 3m, bytes 610 GB -> 38 GB"],
      ["performance", "bigquery", "clustering"], ["dbt/models/staging/stg_web_sessions.sql"], ["dbt/models/staging/stg_web_sessions.sql"])
    O(42, 11, "bugfix", "Attribution model ran out of memory in BigQuery", "Resources exceeded during query execution",
      "int_attribution failed with Resources exceeded during query execution: The query could not be executed in the allotted memory. Peak usage: 146% of limit. An ARRAY_AGG ... ORDER BY over all touches per user was the cause; it now limits to the last 50 touches.",
      ["Resources exceeded during query execution: The query could not be executed in the allotted memory", "ARRAY_AGG(t ORDER BY ts DESC LIMIT 50)"],
      ["bigquery", "memory", "sql"], ["dbt/models/intermediate/int_attribution.sql"], ["dbt/models/intermediate/int_attribution.sql"])
    O(43, 11, "change", "BigQuery job labels for cost attribution", "dbt query-comment job_label",
      "Each dbt query now carries labels for the model and DAG so billing export can group costs.",
      ["dbt_project.yml query-comment: {job-label: true}", "Labels: dbt_model, airflow_dag"],
      ["bigquery", "cost", "observability"], [], ["dbt/dbt_project.yml"])
    O(44, 11, "discovery", "Three models account for 61% of BigQuery spend", "From the labelled billing export",
      "Ranking the billing export by dbt_model label shows int_attribution, stg_web_sessions and fct_sessions dominate cost.",
      ["int_attribution 27%, stg_web_sessions 19%, fct_sessions 15%"],
      ["bigquery", "cost"], [], [])

    O(45, 12, "decision", "dbt_daily now triggered by Airflow Datasets instead of a cron time", "Runs as soon as the exports land",
      "Moving the schedule to 04:00 still failed on slow export nights and wasted hours on fast ones. The team switched dbt_daily to a Dataset schedule so it runs when the export DAGs mark their outputs updated, replacing the 04:00 cron.",
      ["dags/dbt_daily.py schedule=[ORDERS_EXPORT, CUSTOMERS_EXPORT]", "Datasets defined in include/datasets.py"],
      ["airflow", "data-aware scheduling", "datasets"], ["dags/dbt_daily.py"], ["dags/dbt_daily.py", "include/datasets.py"])
    O(46, 12, "change", "Export DAGs declare Dataset outlets", "outlets=[Dataset('gs://acme-lake/exports/orders/')]",
      "The final upload task in each export DAG lists the dataset URI as an outlet so Airflow records the update.",
      ["include/datasets.py ORDERS_EXPORT = Dataset('gs://acme-lake/exports/orders/')", "dags/export_orders.py upload task outlets"],
      ["airflow", "datasets"], [], ["dags/export_orders.py", "dags/export_customers.py"])
    O(47, 12, "bugfix", "dbt_daily ran twice when exports finished at different times", "Orders export updated twice after a retry",
      "A retried orders export emitted two dataset events, queuing an extra dbt_daily run with only orders updated. Exports now only mark the dataset on success of the final task and dbt_daily has max_active_runs=1.",
      ["max_active_runs=1", "Dataset event only from the final upload task"],
      ["airflow", "datasets", "duplicate runs"], ["dags/export_orders.py"], ["dags/dbt_daily.py", "dags/export_orders.py"])
    O(48, 12, "change", "Deadline alert if dbt_daily has not finished by 08:00 UTC", "Replaces Airflow SLA misses",
      "SLA callbacks are unreliable with dataset schedules, so a small DAG at 08:00 checks the last successful dbt_daily run and alerts Slack if it is older than 20 hours.",
      ["dags/dbt_daily_deadline.py schedule='0 8 * * *'"],
      ["alerting", "sla"], [], ["dags/dbt_daily_deadline.py"])

    O(49, 13, "bugfix", "Salesforce bulk jobs failed with an expired session", "SalesforceExpiredSession",
      "Long bulk queries over 2 hours failed with simple_salesforce.exceptions.SalesforceExpiredSession: Expired session. The helper now re-authenticates and resumes polling the job id.",
      ["simple_salesforce.exceptions.SalesforceExpiredSession", "include/salesforce.py _with_session_refresh()"],
      ["salesforce", "authentication", "ingestion"], ["include/salesforce.py"], ["include/salesforce.py"])
    O(50, 13, "change", "Explicit schemas for GCS to BigQuery loads", "autodetect turned off",
      "Schema autodetect guessed a ZIP code column as INTEGER and dropped leading zeros. Load jobs now use JSON schema files in include/schemas/.",
      ["GCSToBigQueryOperator(autodetect=False, schema_object='schemas/accounts.json')", "postal_code STRING"],
      ["bigquery", "schema", "ingestion"], ["dags/ingest_salesforce.py"], ["dags/ingest_salesforce.py", "include/schemas/accounts.json"])
    O(51, 13, "bugfix", "CSV load rejected rows with embedded newlines", "Switched partner loads to NDJSON",
      "Partner loads failed with Error while reading data, error message: CSV table encountered too many errors, giving up. Rows: 1; errors: 1. Notes fields contained newlines; the extract now writes newline-delimited JSON.",
      ["CSV table encountered too many errors, giving up. Rows: 1; errors: 1", "source_format='NEWLINE_DELIMITED_JSON'"],
      ["bigquery", "file formats", "ingestion"], ["dags/partner_files.py"], ["dags/partner_files.py", "include/extract.py"])
    O(52, 13, "refactor", "Shared GcsToBqIngest task group for ingestion DAGs", "Replaces copy-pasted operators",
      "Five ingestion DAGs repeated the same extract, upload, load, freshness-check sequence. include/ingest.py provides a TaskGroup factory.",
      ["include/ingest.py gcs_to_bq_ingest(source, table, schema)"],
      ["refactor", "airflow", "ingestion"], ["dags/ingest_salesforce.py", "dags/partner_files.py"], ["include/ingest.py", "dags/ingest_salesforce.py", "dags/partner_files.py"])

    O(53, 14, "bugfix", "fct_orders missed updated orders in incremental runs", "Timestamp comparison across time zones",
      "The incremental filter compared updated_at (DATETIME in local time) with max(updated_at) stored as TIMESTAMP, silently skipping updates made in the first two hours after midnight. Both sides are now TIMESTAMP in UTC with a 2-hour lookback.",
      ["where updated_at > (select timestamp_sub(max(updated_at), interval 2 hour) from {{ this }})", "stg_orders casts to TIMESTAMP with 'Europe/Berlin'"],
      ["dbt", "incremental models", "timezone"], ["dbt/models/marts/fct_orders.sql"], ["dbt/models/marts/fct_orders.sql", "dbt/models/staging/stg_orders.sql"])
    O(54, 14, "change", "Relationship tests to Salesforce accounts set to warn", "Orphans expected during sync lag",
      "Orders reference accounts created minutes earlier that may not be ingested yet, so the relationships test is severity warn with a threshold.",
      ["config: {severity: error, error_if: '>100', warn_if: '>0'}"],
      ["dbt tests", "data quality"], [], ["dbt/models/marts/schema.yml"])
    O(55, 14, "change", "Added elementary for data observability", "Anomaly tests on row counts",
      "The elementary dbt package records test results and runs volume anomaly tests on key marts; reports go to Slack daily.",
      ["packages.yml elementary-data/elementary 0.15", "elementary.volume_anomalies on fct_orders, fct_events"],
      ["monitoring", "data quality"], [], ["dbt/packages.yml", "dbt/models/marts/schema.yml"])
    O(56, 14, "discovery", "Airflow pool 'bigquery' limits concurrent BigQuery tasks to 8", "Cosmos tasks queue behind it",
      "Cosmos model tasks all use pool='bigquery' with 8 slots, which is why the daily build shows long queued times. Raising it needs a BigQuery slot reservation review.",
      ["Pool bigquery: 8 slots", "Median queued time per model 2m40s"],
      ["airflow", "pools", "concurrency"], ["dags/dbt_daily.py"], [])

    Q("paraphrase", "rerunning yesterday's job pulled in today's rows instead", [5])
    Q("paraphrase", "tasks that just wait for files were hogging every worker", [13])
    Q("paraphrase", "the events fact table cost a fortune every time it refreshed", [10, 25])
    Q("paraphrase", "chat channel flooded with alerts from a single broken run", [32])
    Q("file", "dags/dbt_daily.py parse timeout", [18])
    Q("file", "history of dbt/snapshots/customers_snapshot.sql", [37, 38, 39])
    Q("error", "REQUEST_LIMIT_EXCEEDED: TotalRequests Limit exceeded", [8])
    Q("error", "exceeded quota for Number of partition modifications to a column partitioned table", [21, 22])
    Q("error", "AirflowTaskTimeout: Timeout, PID", [15])
    Q("error", "CSV table encountered too many errors, giving up", [51])
    Q("error", "'dbt_utils' is undefined", [24])
    Q("decision", "why run dbt with cosmos instead of one bash task", [16])
    Q("decision", "why timestamp strategy for the customer snapshot", [39])
    Q("keyword", "sensor reschedule mode", [13])
    Q("keyword", "dbt source freshness", [12])
    Q("keyword", "airflow retry_exponential_backoff default_args", [14])
    Q("temporal", "what triggers the daily dbt DAG now", [45, 29])
    Q("temporal", "which incremental strategy does fct_events use at the moment", [25, 26])
