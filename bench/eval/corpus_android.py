"""The own eval's hand-written corpus, fieldnotes-android: Kotlin / Jetpack Compose / Room /
WorkManager. ``write_dataset`` calls ``add`` in the corpus's order; the records are as they
were written, one per line."""

from bench.eval.dataset_spec import O, Q, project


def add():
    # ---------------------------------------------------------------------------
    # 6. fieldnotes-android: Kotlin / Jetpack Compose / Room / WorkManager
    # ---------------------------------------------------------------------------
    project("android", "/home/dev/fieldnotes-android", "2026-07-07", 14)

    O(1, 1, "discovery", "Explored the FieldNotes Android project modules", "Multi-module Gradle build with Hilt",
      "FieldNotes is an offline-first inspection notes app. The build has :app, :core:data, :core:database, :core:network, :feature:notes and :feature:sync modules, wired with Hilt and written in Compose.",
      ["settings.gradle.kts includes 6 modules", "Hilt 2.48, Compose BOM 2024.02", "minSdk 21, targetSdk 34"],
      ["project structure", "android", "gradle"], ["settings.gradle.kts", "app/build.gradle.kts"], [])
    O(2, 1, "discovery", "Room database is at schema version 7 with exported schemas", "core/database/schemas/",
      "NoteDatabase has entities Note, Attachment, Inspection and SyncState; schema JSON files are exported and committed, which enables migration tests later.",
      ["core/database/src/main/java/com/fieldnotes/db/NoteDatabase.kt version = 7", "room.schemaLocation = core/database/schemas"],
      ["room", "database schema"], ["core/database/src/main/java/com/fieldnotes/db/NoteDatabase.kt"], [])
    O(3, 1, "bugfix", "Gradle build failed on JDK 21", "Unsupported class file major version 65",
      "A fresh checkout failed during configuration with General error during conversion: Unsupported class file major version 65 because the machine defaulted to JDK 21, newer than AGP 8.1 supported. The build now declares a JDK 17 toolchain.",
      ["Unsupported class file major version 65", "kotlin { jvmToolchain(17) } in convention plugin", "gradle.properties org.gradle.java.home removed"],
      ["gradle", "jdk", "build"], ["build-logic/convention/src/main/kotlin/AndroidConventionPlugin.kt"], ["build-logic/convention/src/main/kotlin/AndroidConventionPlugin.kt"])
    O(4, 1, "change", "Introduced a Gradle version catalog", "gradle/libs.versions.toml",
      "Dependency versions were duplicated across module build files. They now live in libs.versions.toml with bundles for compose and room.",
      ["gradle/libs.versions.toml [versions], [libraries], [bundles]", "implementation(libs.bundles.compose)"],
      ["gradle", "dependencies"], [], ["gradle/libs.versions.toml", "app/build.gradle.kts", "core/database/build.gradle.kts"])

    O(5, 2, "bugfix", "Note editor crashed after rotation", "ViewModel could not be created",
      "Rotating the device in the editor crashed with java.lang.RuntimeException: Cannot create an instance of class com.fieldnotes.notes.NoteEditorViewModel. The ViewModel had an @Inject constructor but no @HiltViewModel annotation, and the screen used viewModel() instead of hiltViewModel().",
      ["Cannot create an instance of class com.fieldnotes.notes.NoteEditorViewModel", "Added @HiltViewModel, screen uses hiltViewModel()"],
      ["hilt", "viewmodel", "crash"], ["feature/notes/src/main/java/com/fieldnotes/notes/NoteEditorViewModel.kt"], ["feature/notes/src/main/java/com/fieldnotes/notes/NoteEditorViewModel.kt", "feature/notes/src/main/java/com/fieldnotes/notes/NoteEditorScreen.kt"])
    O(6, 2, "bugfix", "Notes list re-rendered every row on each change", "LazyColumn items had no keys",
      "Editing one note recomposed all visible rows and scrolling stuttered. items() now passes key = { it.id } and the row takes stable parameters.",
      ["LazyColumn items(notes, key = { it.id })", "Layout Inspector recomposition counts dropped from ~40 to 1"],
      ["compose", "recomposition", "performance"], ["feature/notes/src/main/java/com/fieldnotes/notes/NotesListScreen.kt"], ["feature/notes/src/main/java/com/fieldnotes/notes/NotesListScreen.kt"])
    O(7, 2, "feature", "Photo attachments captured with CameraX", "ImageCapture to app-private storage",
      "Inspectors can attach photos to notes. CameraX ImageCapture writes JPEGs into filesDir/attachments and an Attachment row links them to the note.",
      ["androidx.camera 1.3.1", "feature/notes/.../camera/CaptureScreen.kt"],
      ["camera", "attachments"], [], ["feature/notes/src/main/java/com/fieldnotes/notes/camera/CaptureScreen.kt", "core/database/src/main/java/com/fieldnotes/db/Attachment.kt"])
    O(8, 2, "bugfix", "Sharing a photo crashed with FileUriExposedException", "file:// URI passed to another app",
      "Share to email crashed with android.os.FileUriExposedException: file:///data/user/0/com.fieldnotes/files/attachments/a1.jpg exposed beyond app through ClipData.Item.getUri(). Sharing now uses FileProvider content URIs with FLAG_GRANT_READ_URI_PERMISSION.",
      ["android.os.FileUriExposedException ... exposed beyond app through ClipData.Item.getUri()", "app/src/main/res/xml/file_paths.xml", "FileProvider authority com.fieldnotes.fileprovider"],
      ["file sharing", "fileprovider", "crash"], ["app/src/main/AndroidManifest.xml"], ["app/src/main/AndroidManifest.xml", "app/src/main/res/xml/file_paths.xml"])

    O(9, 3, "feature", "Background sync with a 15-minute periodic WorkManager job", "SyncWorker pushes and pulls notes",
      "SyncWorker uploads dirty notes and attachments, then pulls server changes since the last cursor. It is enqueued as unique periodic work every 15 minutes, the WorkManager minimum.",
      ["feature/sync/.../SyncWorker.kt CoroutineWorker", "PeriodicWorkRequestBuilder<SyncWorker>(15, TimeUnit.MINUTES)", "enqueueUniquePeriodicWork(\"sync\", KEEP, ...)"],
      ["sync", "workmanager", "background work"], [], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncWorker.kt", "app/src/main/java/com/fieldnotes/App.kt"])
    O(10, 3, "bugfix", "Notes duplicated on the server after a sync retry", "POST retried after a read timeout",
      "On poor mobile coverage the POST /notes succeeded server-side but the response timed out, WorkManager retried and the server created a second note. Notes now get a client-generated UUID and sync uses PUT /notes/{id} as an upsert.",
      ["java.net.SocketTimeoutException: timeout during POST /notes", "Note.id is UUID generated on device", "PUT /notes/{id} is idempotent"],
      ["idempotency", "sync", "retry"], ["core/network/src/main/java/com/fieldnotes/net/NotesApi.kt"], ["core/network/src/main/java/com/fieldnotes/net/NotesApi.kt", "feature/sync/src/main/java/com/fieldnotes/sync/SyncWorker.kt"])
    O(11, 3, "change", "Sync work uses exponential backoff starting at 30s", "Result.retry() on IOException",
      "Network failures return Result.retry() and the request sets BackoffPolicy.EXPONENTIAL with 30 seconds; HTTP 4xx return Result.failure() so bad data does not loop.",
      ["setBackoffCriteria(BackoffPolicy.EXPONENTIAL, 30, TimeUnit.SECONDS)", "4xx -> Result.failure(), IOException/5xx -> Result.retry()"],
      ["retry", "backoff", "workmanager"], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncWorker.kt"], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncWorker.kt"])
    O(12, 3, "change", "OkHttp timeouts tuned for photo uploads", "connect 10s, read 30s, write 60s",
      "Default 10s write timeout failed large photo uploads on 3G. The client now uses 10s connect, 30s read and 60s write timeouts, with callTimeout 2 minutes.",
      ["core/network/.../NetworkModule.kt OkHttpClient.Builder().connectTimeout(10s).readTimeout(30s).writeTimeout(60s).callTimeout(120s)"],
      ["timeout", "okhttp", "uploads"], ["core/network/src/main/java/com/fieldnotes/net/NetworkModule.kt"], ["core/network/src/main/java/com/fieldnotes/net/NetworkModule.kt"])

    O(13, 4, "decision", "Chose Coil over Glide for image loading", "Compose-first and coroutine based",
      "The app used Glide through an accompanist wrapper. Coil was chosen because it has first-class Compose support (AsyncImage), is built on coroutines and OkHttp which the app already uses, and adds less APK size.",
      ["Coil 2.6 chosen", "Glide compose integration was still beta", "APK size -310 KB after removing Glide"],
      ["image loading", "library choice", "compose"], ["feature/notes/src/main/java/com/fieldnotes/notes/NotesListScreen.kt"], [])
    O(14, 4, "refactor", "Replaced Glide calls with Coil AsyncImage", "Shared ImageLoader provided by Hilt",
      "All GlideImage usages were replaced with AsyncImage and a singleton ImageLoader with a 25% memory cache and disk cache under cacheDir/images.",
      ["core/ui/.../ImageLoaderModule.kt", "memoryCache maxSizePercent(0.25)"],
      ["image loading", "refactor"], [], ["core/ui/src/main/java/com/fieldnotes/ui/ImageLoaderModule.kt", "feature/notes/src/main/java/com/fieldnotes/notes/AttachmentGrid.kt"])
    O(15, 4, "bugfix", "OutOfMemoryError in the attachment grid on older devices", "Full 12 MP photos decoded for thumbnails",
      "Scrolling a note with 30 photos on a 2 GB device crashed with java.lang.OutOfMemoryError: Failed to allocate a 48000012 byte allocation with 25165824 free bytes. Thumbnails now request a 256px size so Coil downsamples on decode.",
      ["java.lang.OutOfMemoryError: Failed to allocate a 48000012 byte allocation", "ImageRequest.Builder.size(256)", "Samsung Galaxy A10, Android 10"],
      ["memory", "images", "crash"], ["feature/notes/src/main/java/com/fieldnotes/notes/AttachmentGrid.kt"], ["feature/notes/src/main/java/com/fieldnotes/notes/AttachmentGrid.kt"])
    O(16, 4, "change", "Precomputed thumbnails stored next to attachments", "Grid scroll no longer decodes originals",
      "When a photo is captured, a 512px thumbnail is written alongside it; the grid loads thumbnails and the viewer loads the original.",
      ["attachments/<id>.jpg and attachments/<id>_thumb.jpg", "Thumbnail generated on Dispatchers.IO"],
      ["performance", "images"], [], ["feature/notes/src/main/java/com/fieldnotes/notes/camera/ThumbnailWriter.kt"])

    O(17, 5, "change", "Room schema version 8 adds notes.synced_at", "Migration MIGRATION_7_8",
      "The sync screen needs per-note last-synced time. Version 8 adds a nullable synced_at INTEGER column.",
      ["ALTER TABLE notes ADD COLUMN synced_at INTEGER", "NoteDatabase version = 8"],
      ["room", "database migration"], ["core/database/src/main/java/com/fieldnotes/db/NoteDatabase.kt"], ["core/database/src/main/java/com/fieldnotes/db/NoteDatabase.kt", "core/database/src/main/java/com/fieldnotes/db/Migrations.kt"])
    O(18, 5, "bugfix", "Beta users crashed on launch after the schema bump", "Migration 7->8 not registered",
      "The beta crashed at first database access with java.lang.IllegalStateException: A migration from 7 to 8 was required but not found. MIGRATION_7_8 was defined but never passed to addMigrations() in the database builder.",
      ["IllegalStateException: A migration from 7 to 8 was required but not found", "DatabaseModule.kt .addMigrations(MIGRATION_5_6, MIGRATION_6_7, MIGRATION_7_8)", "Affected 140 beta installs"],
      ["room", "database migration", "crash"], ["core/database/src/main/java/com/fieldnotes/db/DatabaseModule.kt"], ["core/database/src/main/java/com/fieldnotes/db/DatabaseModule.kt"])
    O(19, 5, "change", "Migration tests with MigrationTestHelper", "Every version from 5 to current",
      "An instrumented test creates each old schema, inserts sample rows, runs migrations and validates against the exported schema JSON.",
      ["core/database/src/androidTest/.../MigrationTest.kt", "helper.runMigrationsAndValidate(TEST_DB, 8, true, MIGRATION_7_8)"],
      ["tests", "room", "database migration"], [], ["core/database/src/androidTest/java/com/fieldnotes/db/MigrationTest.kt"])
    O(20, 5, "decision", "No fallbackToDestructiveMigration in release builds", "Unsynced offline notes would be wiped",
      "Someone suggested fallbackToDestructiveMigration() to avoid migration crashes. The team rejected it for release builds because notes created offline and not yet synced exist only on the device; debug builds may still use it.",
      ["if (BuildConfig.DEBUG) fallbackToDestructiveMigration()", "Migration tests are the safety net instead"],
      ["room", "database migration", "data loss"], ["core/database/src/main/java/com/fieldnotes/db/DatabaseModule.kt"], [])

    O(21, 6, "bugfix", "ANR on cold start from SharedPreferences commit()", "Synchronous disk write in Application.onCreate",
      "Android Vitals reported ANRs on app start; the trace showed SharedPreferencesImpl.commit blocking main while migrating settings. Settings moved to DataStore and the migration runs off the main thread.",
      ["ANR: Input dispatching timed out, main thread in SharedPreferencesImpl$EditorImpl.commit", "App.onCreate no longer touches prefs"],
      ["anr", "startup", "main thread"], ["app/src/main/java/com/fieldnotes/App.kt"], ["app/src/main/java/com/fieldnotes/App.kt"])
    O(22, 6, "change", "Settings migrated from SharedPreferences to Preferences DataStore", "SharedPreferencesMigration",
      "A Preferences DataStore with SharedPreferencesMigration replaces the legacy prefs file; settings are exposed as a Flow.",
      ["core/data/.../SettingsRepository.kt preferencesDataStore(name = \"settings\", produceMigrations = ...)", "datastore-preferences 1.0.0"],
      ["datastore", "settings"], [], ["core/data/src/main/java/com/fieldnotes/data/SettingsRepository.kt"])
    O(23, 6, "change", "Cold start 2.4s to 1.1s with a baseline profile", "Macrobenchmark measured on Pixel 4a",
      "A baseline profile generated by a macrobenchmark module precompiles startup and list-scrolling paths, and Hilt initialisation of the sync graph is now lazy.",
      [":baselineprofile module with BaselineProfileRule", "timeToInitialDisplay median 2.4s -> 1.1s", "profileinstaller 1.3.1"],
      ["performance", "startup", "baseline profiles"], [], ["baselineprofile/build.gradle.kts", "app/src/main/baseline-prof.txt"])
    O(24, 6, "change", "minSdk raised from 21 to 24", "Drops Android 5/6 (0.6% of installs)",
      "Supporting API 21-23 needed multidex and several compat workarounds. Play Console showed 0.6% of active installs below 24, so minSdk moved to 24.",
      ["minSdk = 24 in build-logic convention plugin", "Removed androidx.multidex"],
      ["min sdk", "android versions"], ["build-logic/convention/src/main/kotlin/AndroidConventionPlugin.kt"], ["build-logic/convention/src/main/kotlin/AndroidConventionPlugin.kt"])

    O(25, 7, "decision", "Sync interval changed from 15 minutes to 1 hour", "Battery complaints and excessive wakeups",
      "Play reviews complained about battery drain and Android Vitals flagged excessive wakeups. Since most inspectors sync at the end of a site visit anyway, the periodic sync moved to every hour.",
      ["PeriodicWorkRequestBuilder<SyncWorker>(1, TimeUnit.HOURS)", "Android Vitals: excessive wakeups 2.1% of sessions", "ExistingPeriodicWorkPolicy.UPDATE to replace the old schedule"],
      ["sync", "battery", "workmanager"], ["app/src/main/java/com/fieldnotes/App.kt"], ["app/src/main/java/com/fieldnotes/App.kt"])
    O(26, 7, "discovery", "Periodic sync never runs on some Xiaomi and Huawei phones", "Aggressive OEM battery management",
      "Support tickets showed notes not syncing for days on MIUI devices. The OEM kills background work unless the app is whitelisted; the settings screen now links to the battery optimisation page with instructions.",
      ["dontkillmyapp.com lists MIUI autostart restrictions", "Intent Settings.ACTION_REQUEST_IGNORE_BATTERY_OPTIMIZATIONS not allowed by Play policy for this app type"],
      ["sync", "oem", "battery"], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncWorker.kt"], ["feature/settings/src/main/java/com/fieldnotes/settings/SettingsScreen.kt"])
    O(27, 7, "feature", "Manual 'Sync now' button using expedited work", "OneTimeWorkRequest with setExpedited",
      "Inspectors wanted to push notes before leaving a site. The button enqueues a unique one-time expedited SyncWorker and shows progress from WorkInfo.",
      ["OneTimeWorkRequestBuilder<SyncWorker>().setExpedited(OutOfQuotaPolicy.RUN_AS_NON_EXPEDITED_WORK_REQUEST)", "enqueueUniqueWork(\"sync-now\", REPLACE, ...)"],
      ["sync", "workmanager", "ui"], [], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncNowButton.kt"])
    O(28, 7, "bugfix", "Expedited sync crashed on Android 11 and lower", "getForegroundInfo not implemented",
      "On API 30 and below expedited work runs as a foreground service, and the worker crashed with IllegalStateException: Not implemented... getForegroundInfo. SyncWorker now overrides getForegroundInfo with a low-priority sync notification.",
      ["java.lang.IllegalStateException: Expedited WorkRequests require a ListenableWorker to provide an implementation for `getForegroundInfoAsync()`", "Notification channel 'sync' IMPORTANCE_LOW"],
      ["workmanager", "foreground service", "crash"], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncWorker.kt"], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncWorker.kt"])

    O(29, 8, "change", "Upgraded to Kotlin 2.0 (K2 compiler)", "AGP 8.5, Compose BOM 2024.06",
      "Kotlin 2.0.0 with the K2 compiler; full build time improved about 15%.",
      ["libs.versions.toml kotlin = \"2.0.0\", agp = \"8.5.0\"", "Clean build 4m05s -> 3m28s"],
      ["dependency upgrade", "kotlin"], ["gradle/libs.versions.toml"], ["gradle/libs.versions.toml"])
    O(30, 8, "bugfix", "Build failed: Compose Compiler Gradle plugin required", "Kotlin 2.0 moved the compiler into the Kotlin repo",
      "After the upgrade Gradle failed with Starting in Kotlin 2.0, the Compose Compiler Gradle plugin is required when compose is enabled. The convention plugin now applies org.jetbrains.kotlin.plugin.compose and composeOptions.kotlinCompilerExtensionVersion was removed.",
      ["Starting in Kotlin 2.0, the Compose Compiler Gradle plugin is required when compose is enabled", "plugins { alias(libs.plugins.compose.compiler) }"],
      ["kotlin", "compose", "gradle"], ["build-logic/convention/src/main/kotlin/AndroidComposeConventionPlugin.kt"], ["build-logic/convention/src/main/kotlin/AndroidComposeConventionPlugin.kt", "gradle/libs.versions.toml"])
    O(31, 8, "change", "Migrated Room and Hilt from kapt to KSP", "Clean build 3m28s -> 1m52s",
      "kapt was the slowest part of the build. Room and Hilt both support KSP; kapt was removed from all modules.",
      ["ksp(libs.room.compiler), ksp(libs.hilt.compiler)", "Clean build 3m28s -> 1m52s", "ksp 2.0.0-1.0.22"],
      ["build performance", "ksp", "kapt"], ["core/database/build.gradle.kts"], ["core/database/build.gradle.kts", "app/build.gradle.kts", "gradle/libs.versions.toml"])
    O(32, 8, "bugfix", "Hilt KSP processing failed after the kapt removal", "Old Hilt version without K2 support",
      "KSP failed with [ksp] InjectProcessingStep was unable to process 'SyncRepository(...)' because 'error.NonExistentClass' could not be resolved. Hilt 2.48 did not support KSP2 with K2; upgrading to Hilt 2.51.1 fixed it.",
      ["[ksp] InjectProcessingStep was unable to process ... 'error.NonExistentClass' could not be resolved", "hilt = \"2.51.1\""],
      ["hilt", "ksp", "build"], ["gradle/libs.versions.toml"], ["gradle/libs.versions.toml"])

    O(33, 9, "feature", "Offline edit conflict resolution", "Per-field last-write-wins",
      "Two inspectors editing the same note offline overwrote each other wholesale. Sync now sends changed fields with their edit time and the server merges field by field.",
      ["NoteChange(field, value, editedAt)", "Server endpoint PATCH /notes/{id}/fields"],
      ["sync", "conflict resolution", "offline first"], [], ["feature/sync/src/main/java/com/fieldnotes/sync/ConflictResolver.kt", "core/network/src/main/java/com/fieldnotes/net/NotesApi.kt"])
    O(34, 9, "decision", "Per-field last-write-wins instead of CRDTs", "Notes are short and edits rarely collide",
      "Claude compared a text CRDT (Automerge/Yjs) with per-field LWW. The team chose LWW because notes are short structured forms, concurrent edits to the same field are rare, and CRDT libraries on Android would add a JNI dependency and complex server changes.",
      ["Automerge-kotlin rejected (native libs, server rewrite)", "Conflicts logged for review in conflict_log table"],
      ["conflict resolution", "architecture", "sync"], [], [])
    O(35, 9, "bugfix", "Edits lost on devices with a wrong clock", "Device timestamps used for last-write-wins",
      "A tablet with its clock set a day behind always lost conflicts, discarding fresh edits. Ordering now uses a server-issued revision number per field; device time is only a display hint.",
      ["NoteField.revision Long from server", "Tablet clock skew: -26h"],
      ["clock skew", "sync", "conflict resolution"], ["feature/sync/src/main/java/com/fieldnotes/sync/ConflictResolver.kt"], ["feature/sync/src/main/java/com/fieldnotes/sync/ConflictResolver.kt"])
    O(36, 9, "change", "Robolectric tests for conflict resolution", "Fake server in MockWebServer",
      "Tests simulate two devices editing the same note against MockWebServer and check the merged result.",
      ["feature/sync/src/test/.../ConflictResolverTest.kt", "okhttp3.mockwebserver 4.12"],
      ["tests", "sync"], [], ["feature/sync/src/test/java/com/fieldnotes/sync/ConflictResolverTest.kt"])

    O(37, 10, "bugfix", "Photo uploads rejected with HTTP 413", "Original 12 MP JPEGs exceeded the 10 MB limit",
      "Uploads from new phones failed with HTTP 413 Payload Too Large from the nginx ingress (client_max_body_size 10m). Photos are resized to a 2048px long edge at JPEG quality 85 before upload.",
      ["HTTP 413 Payload Too Large", "Resize to 2048px, quality 85: ~900 KB average", "Originals kept locally"],
      ["uploads", "images", "http status"], ["feature/sync/src/main/java/com/fieldnotes/sync/AttachmentUploader.kt"], ["feature/sync/src/main/java/com/fieldnotes/sync/AttachmentUploader.kt"])
    O(38, 10, "change", "OkHttp interceptor retries 502/503/504", "Up to 3 attempts with jittered backoff",
      "The ingress returned 503 during backend deploys. A RetryInterceptor retries gateway errors up to 3 times with 500ms-4s jittered backoff.",
      ["core/network/.../RetryInterceptor.kt", "Retries on 502, 503, 504 and IOException"],
      ["retry", "okhttp", "interceptor"], [], ["core/network/src/main/java/com/fieldnotes/net/RetryInterceptor.kt", "core/network/src/main/java/com/fieldnotes/net/NetworkModule.kt"])
    O(39, 10, "bugfix", "Retry interceptor created duplicate attachments", "POST retried without idempotency",
      "Attachments appeared twice because the interceptor retried POST /attachments after a 504 even though the server had stored the file. The interceptor now only retries idempotent methods or requests carrying an Idempotency-Key header, which the uploader sets to the attachment UUID.",
      ["RetryInterceptor checks request.method in (GET, PUT, DELETE) or header Idempotency-Key", "Server dedupes on Idempotency-Key for 24h"],
      ["retry", "idempotency", "uploads"], ["core/network/src/main/java/com/fieldnotes/net/RetryInterceptor.kt"], ["core/network/src/main/java/com/fieldnotes/net/RetryInterceptor.kt", "feature/sync/src/main/java/com/fieldnotes/sync/AttachmentUploader.kt"])
    O(40, 10, "change", "Certificate pinning for the API host", "OkHttp CertificatePinner with backup pin",
      "The security audit required pinning. The client pins the intermediate CA public key plus a backup key to survive certificate rotation.",
      ["CertificatePinner.Builder().add(\"api.fieldnotes.app\", \"sha256/...primary\", \"sha256/...backup\")", "Debug builds skip pinning for mitmproxy"],
      ["security", "tls", "okhttp"], [], ["core/network/src/main/java/com/fieldnotes/net/NetworkModule.kt"])

    O(41, 11, "bugfix", "Crash loading notes with large sketches", "SQLiteBlobTooBigException",
      "Notes with big hand-drawn sketches crashed the list with android.database.sqlite.SQLiteBlobTooBigException: Row too big to fit into CursorWindow requiredPos=0, totalRows=1. Sketch stroke JSON was stored inline in the notes table; it now lives in files with only a path in the row.",
      ["SQLiteBlobTooBigException: Row too big to fit into CursorWindow", "CursorWindow limit 2 MB", "Migration 8->9 moves sketch_json to files"],
      ["room", "crash", "storage"], ["core/database/src/main/java/com/fieldnotes/db/Note.kt"], ["core/database/src/main/java/com/fieldnotes/db/Note.kt", "core/database/src/main/java/com/fieldnotes/db/Migrations.kt"])
    O(42, 11, "feature", "Full-text search over notes with Room FTS4", "NoteFts entity with external content",
      "Search previously used LIKE '%term%' and took 800ms on 20k notes. An @Fts4(contentEntity = Note::class) table indexes title and body; queries take under 20ms.",
      ["@Fts4(contentEntity = Note::class) data class NoteFts(title, body)", "LIKE 800ms -> FTS 15ms on 20k notes"],
      ["search", "fts", "room"], [], ["core/database/src/main/java/com/fieldnotes/db/NoteFts.kt", "core/database/src/main/java/com/fieldnotes/db/NoteDao.kt"])
    O(43, 11, "bugfix", "Search found nothing for partial words", "FTS MATCH needs a prefix wildcard",
      "Typing 'insp' found no notes containing 'inspection' because FTS tokens match whole words. The DAO now appends * to each token and escapes quotes.",
      ["NoteDao.search(query) uses MATCH :q with q = tokens.joinToString(\" \") { \"$it*\" }"],
      ["search", "fts"], ["core/database/src/main/java/com/fieldnotes/db/NoteDao.kt"], ["core/database/src/main/java/com/fieldnotes/db/NoteDao.kt"])
    O(44, 11, "change", "Search input debounced by 300ms", "Flow debounce in SearchViewModel",
      "Every keystroke hit the database. The query StateFlow is debounced by 300ms and distinctUntilChanged before flatMapLatest to the DAO.",
      ["queryFlow.debounce(300).distinctUntilChanged().flatMapLatest { dao.search(it) }"],
      ["search", "coroutines", "flow"], [], ["feature/notes/src/main/java/com/fieldnotes/notes/SearchViewModel.kt"])

    O(45, 12, "decision", "Sync strategy revised: 6-hour periodic plus event triggers", "Replaces the hourly schedule",
      "Hourly sync still woke devices that had nothing to send. The team moved to a 6-hour periodic safety net plus expedited one-time syncs when a note is saved while online, when connectivity returns, and when the app comes to the foreground.",
      ["PeriodicWorkRequestBuilder<SyncWorker>(6, TimeUnit.HOURS)", "Triggers: note saved, network available, ProcessLifecycleOwner ON_START", "Wakeups down 70% vs hourly"],
      ["sync", "battery", "workmanager"], ["app/src/main/java/com/fieldnotes/App.kt"], ["app/src/main/java/com/fieldnotes/App.kt", "feature/sync/src/main/java/com/fieldnotes/sync/SyncScheduler.kt"])
    O(46, 12, "change", "Sync constraints: connected network and battery not low", "WorkManager Constraints",
      "Both periodic and triggered syncs require NetworkType.CONNECTED and setRequiresBatteryNotLow(true); photo uploads additionally prefer unmetered networks when the user enables Wi-Fi-only.",
      ["Constraints.Builder().setRequiredNetworkType(NetworkType.CONNECTED).setRequiresBatteryNotLow(true)", "Wi-Fi only setting -> NetworkType.UNMETERED"],
      ["sync", "workmanager", "constraints"], [], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncScheduler.kt"])
    O(47, 12, "change", "minSdk raised from 24 to 26", "java.time without desugaring, adaptive icons only",
      "With installs on API 24-25 at 0.9%, minSdk moved to 26, allowing removal of core library desugaring and legacy PNG launcher icons.",
      ["minSdk = 26", "Removed coreLibraryDesugaring dependency", "Removed mipmap-*dpi/ic_launcher.png"],
      ["min sdk", "android versions"], ["build-logic/convention/src/main/kotlin/AndroidConventionPlugin.kt"], ["build-logic/convention/src/main/kotlin/AndroidConventionPlugin.kt", "app/build.gradle.kts"])
    O(48, 12, "bugfix", "Crash on Android 14 registering the connectivity receiver", "RECEIVER_EXPORTED flag required",
      "The Play pre-launch report showed java.lang.SecurityException: com.fieldnotes: One of RECEIVER_EXPORTED or RECEIVER_NOT_EXPORTED should be specified when a receiver isn't being registered exclusively for system broadcasts. The receiver is now registered with ContextCompat.RECEIVER_NOT_EXPORTED.",
      ["SecurityException: One of RECEIVER_EXPORTED or RECEIVER_NOT_EXPORTED should be specified", "ContextCompat.registerReceiver(ctx, receiver, filter, ContextCompat.RECEIVER_NOT_EXPORTED)"],
      ["android 14", "broadcast receiver", "crash"], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncScheduler.kt"], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncScheduler.kt"])

    O(49, 13, "bugfix", "Cursor jumped to the end while typing fast in the note body", "TextField state updated asynchronously",
      "The body TextField read its value from a ViewModel StateFlow updated via a coroutine, so fast typing raced and the cursor jumped. The editor now keeps text in local TextFieldState and pushes changes to the ViewModel.",
      ["BasicTextField(state = rememberTextFieldState())", "ViewModel receives snapshotFlow { state.text } debounced"],
      ["compose", "text input", "state"], ["feature/notes/src/main/java/com/fieldnotes/notes/NoteEditorScreen.kt"], ["feature/notes/src/main/java/com/fieldnotes/notes/NoteEditorScreen.kt", "feature/notes/src/main/java/com/fieldnotes/notes/NoteEditorViewModel.kt"])
    O(50, 13, "feature", "Material 3 dynamic color and dark theme", "Uses wallpaper colors on Android 12+",
      "FieldNotesTheme picks dynamicDarkColorScheme/dynamicLightColorScheme on API 31+ and falls back to the brand palette.",
      ["core/ui/.../Theme.kt dynamicColor = Build.VERSION.SDK_INT >= 31"],
      ["theming", "material 3", "dark mode"], [], ["core/ui/src/main/java/com/fieldnotes/ui/Theme.kt"])
    O(51, 13, "bugfix", "Release build crashed parsing API responses", "R8 stripped Gson model constructors",
      "Only the minified release crashed with java.lang.NoSuchMethodException: com.fieldnotes.net.dto.NoteDto.<init> []. R8 removed members Gson needs via reflection; a keep rule for the dto package fixed it short term.",
      ["java.lang.NoSuchMethodException: com.fieldnotes.net.dto.NoteDto.<init> []", "app/proguard-rules.pro -keep class com.fieldnotes.net.dto.** { *; }"],
      ["r8", "proguard", "serialization"], ["app/proguard-rules.pro"], ["app/proguard-rules.pro"])
    O(52, 13, "refactor", "Replaced Gson with kotlinx.serialization", "No reflection, no keep rules",
      "To avoid further R8 surprises the DTOs use @Serializable and Retrofit uses the kotlinx serialization converter; the Gson keep rule was deleted.",
      ["retrofit2-kotlinx-serialization-converter", "Json { ignoreUnknownKeys = true }", "Removed com.google.code.gson"],
      ["serialization", "refactor"], ["core/network/src/main/java/com/fieldnotes/net/NetworkModule.kt"], ["core/network/src/main/java/com/fieldnotes/net/NetworkModule.kt", "core/network/src/main/java/com/fieldnotes/net/dto/NoteDto.kt", "app/proguard-rules.pro"])

    O(53, 14, "change", "Notes list jank reduced from 38% to 4% janky frames", "Stable UI models and remembered formatters",
      "JankStats showed 38% janky frames while scrolling. NoteRow received an unstable List and created a DateTimeFormatter per row; UI models are now @Immutable and the formatter is remembered.",
      ["@Immutable data class NoteRowUi", "Janky frames 38% -> 4% on Pixel 4a", "Compose compiler reports used to find unstable params"],
      ["performance", "compose", "recomposition"], ["feature/notes/src/main/java/com/fieldnotes/notes/NotesListScreen.kt"], ["feature/notes/src/main/java/com/fieldnotes/notes/NotesListScreen.kt", "feature/notes/src/main/java/com/fieldnotes/notes/NoteRowUi.kt"])
    O(54, 14, "bugfix", "Portrait photos shown sideways in thumbnails", "EXIF orientation ignored by ThumbnailWriter",
      "Thumbnails created with BitmapFactory ignored the EXIF orientation tag, so portrait photos appeared rotated. ThumbnailWriter reads ExifInterface and rotates the bitmap before saving.",
      ["androidx.exifinterface 1.3.7", "ExifInterface.TAG_ORIENTATION -> Matrix.postRotate"],
      ["images", "exif"], ["feature/notes/src/main/java/com/fieldnotes/notes/camera/ThumbnailWriter.kt"], ["feature/notes/src/main/java/com/fieldnotes/notes/camera/ThumbnailWriter.kt"])
    O(55, 14, "change", "targetSdk 35 with edge-to-edge", "enableEdgeToEdge and window insets",
      "Targeting API 35 enforces edge-to-edge. MainActivity calls enableEdgeToEdge() and screens apply WindowInsets.safeDrawing padding.",
      ["targetSdk = 35", "Scaffold contentWindowInsets = WindowInsets.safeDrawing"],
      ["target sdk", "edge to edge", "ui"], [], ["app/src/main/java/com/fieldnotes/MainActivity.kt", "build-logic/convention/src/main/kotlin/AndroidConventionPlugin.kt"])
    O(56, 14, "discovery", "Top Crashlytics issue is a CameraX session closed on backgrounding", "IllegalStateException: Camera is closed",
      "The leading crash (0.3% of users) happens when the app is backgrounded mid-capture and takePicture runs against a closed camera. Logged for the next session.",
      ["java.lang.IllegalStateException: Camera is closed", "CaptureScreen.kt takePicture callback"],
      ["crash", "camera"], ["feature/notes/src/main/java/com/fieldnotes/notes/camera/CaptureScreen.kt"], [])

    Q("paraphrase", "phone battery drains because the app keeps waking up", [25, 45])
    Q("paraphrase", "notes showed up twice on the backend after a spotty connection", [10])
    Q("paraphrase", "scrolling through lots of inspection pictures crashed cheap phones", [15])
    Q("paraphrase", "tablet with the wrong date kept losing its changes", [35])
    Q("file", "app/proguard-rules.pro keep rule", [51, 52])
    Q("file", "RetryInterceptor.kt changes", [38, 39])
    Q("error", "A migration from 7 to 8 was required but not found", [18])
    Q("error", "Row too big to fit into CursorWindow", [41])
    Q("error", "getForegroundInfoAsync expedited WorkRequests", [28])
    Q("error", "HTTP 413 Payload Too Large on upload", [37])
    Q("error", "Unsupported class file major version 65", [3])
    Q("decision", "why coil and not glide", [13])
    Q("decision", "why not just fall back to destructive migration", [20])
    Q("keyword", "kapt to ksp build time", [31])
    Q("keyword", "fts prefix serach", [43])
    Q("keyword", "certificate pining", [40])
    Q("temporal", "how often does background sync run now", [45, 25])
    Q("temporal", "what is the current minSdk", [47])
