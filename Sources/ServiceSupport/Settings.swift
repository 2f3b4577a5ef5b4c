import HeraldCore

/// Every environment variable the processes read, each once (Setting.swift says what an entry holds). The readers
/// (IntakeConfiguration, WorkerConfiguration, PushSettings, HTTPFetchConfiguration, heraldctl) take names, defaults
/// and ranges from here; a default that is a domain rule stays in HeraldCore and is referred to here.
/// SettingsCatalogTests check that no other `HERALD_*` name is read and that docs/configuration.md is up to date.
public enum Settings {
    /// In the order of docs/configuration.md.
    public static let all: [Setting] = shared + intake + worker + heraldctlOnly

    static let shared: [Setting] = [
        databaseURL, databasePrepared, logLevel,
        signingKeys, signingKeyID, deepLinkScheme, maxRecipients, defaultTTLSeconds, publicURL, notificationCategories,
        defaultTenant, defaultRateLimitPerMinute, defaultRateLimitPerDay,
        webhookAllowPrivate, caFile,
    ]

    // MARK: Database and logs

    public static let databaseURL = Setting(
        "HERALD_DATABASE_URL", .database, readers: [.intake, .worker, .heraldctl], default: .required,
        format: "libpq connection string (`host=... dbname=...`) or `postgres://` / `postgresql://` URI",
        summary: "The Postgres database.")
    public static let databasePrepared = Setting(
        "HERALD_DB_PREPARED", .database, readers: [.intake, .worker, .heraldctl],
        default: .flag(true), format: "`0` or `1`",
        summary: """
            `1`: each SQL text is a named prepared statement per connection, unless the connection finds a pooler \
            answering for Postgres (then unnamed, with a warning and `/readyz` naming this setting); `0`: unnamed \
            statements and no session settings but TimeZone, for PgBouncer in transaction mode (docs/deployment.md, \
            *Connection poolers*).
            """)
    public static let logLevel = Setting(
        "HERALD_LOG_LEVEL", .database, readers: [.intake, .worker], default: .text("info"),
        format: "`debug`, `info`, `warning` or `error`",
        summary: "The least severe lines written. One line per request is written at `debug` only.")

    // MARK: Pushes: payloads and signing (the intake and `heraldctl backfill sends` render pushes alike)

    public static let signingKeys = Setting(
        "HERALD_SIGNING_KEYS", .pushes, readers: [.intake, .heraldctl], default: .required,
        format: "`kid:base64key,kid:base64key`",
        summary: """
            Payload signing keys; each key at least 32 bytes after base64 decoding, each kid 1-32 characters. \
            heraldctl needs them for `backfill sends` and a partner's revocation.
            """)
    public static let signingKeyID = Setting(
        "HERALD_SIGNING_KEY_ID", .pushes, readers: [.intake, .heraldctl],
        default: .derived("the only key, if there is exactly one"), format: "a kid of `HERALD_SIGNING_KEYS`",
        summary: "Kid of the active signing key; required when `HERALD_SIGNING_KEYS` has several.")
    public static let deepLinkScheme = Setting(
        "HERALD_DEEPLINK_SCHEME", .pushes, readers: [.intake, .heraldctl], default: .text(PushRules().deepLinkScheme),
        format: "`^[a-z][a-z0-9+.-]{0,31}$`",
        summary: "Scheme of the deep-link namespace `<scheme>://miniapp/<miniAppId>`.")
    public static let maxRecipients = Setting(
        "HERALD_MAX_RECIPIENTS", .pushes, readers: [.intake, .heraldctl], default: .integer(PushRules().maxRecipients),
        range: 1...10_000, summary: "Most identifiers per push after de-duplication.")
    public static let defaultTTLSeconds = Setting(
        "HERALD_DEFAULT_TTL_SECONDS", .pushes, readers: [.intake, .heraldctl],
        default: .integer(PushRules().defaultTTLSeconds), range: PushRules.ttlRange, unit: .seconds,
        summary: """
            TTL of a push sent without `ttlSeconds` (up to 28 days), counted from when it is due; every delivery \
            carries it (`apns-expiration`, `android.ttl`), never 0.
            """)
    public static let publicURL = Setting(
        "HERALD_PUBLIC_URL", .pushes, readers: [.intake, .heraldctl], default: .unset,
        format: "absolute `http(s)://` URL, no query or fragment",
        summary: """
            The intake's public base URL: payloads of a partner with an icon carry `imageUrl` = this + \
            `/icons/{miniAppId}/256.png`; unset, payloads carry no `imageUrl`. The console's cookie is `Secure` \
            when it is https.
            """)
    public static let notificationCategories = Setting(
        "HERALD_NOTIFICATION_CATEGORIES", .pushes, readers: [.intake, .heraldctl], default: .unset,
        format: "comma-separated identifiers, each 1-64 of `[A-Za-z0-9._-]`, none twice",
        summary: """
            The notification categories the host app's build registers (its action buttons); a push may name one \
            as `category` (`aps.category`, FCM data `category`), any other is 400 `unknown_category`. Unset, no \
            push may carry a category. List a category here only once the build that registers it has shipped.
            """)

    // MARK: Partners: defaults (the admin API's and `heraldctl partners create`'s)

    public static let defaultTenant = Setting(
        "HERALD_DEFAULT_TENANT", .partners, readers: [.intake, .heraldctl], default: .text("default"),
        format: "1-128 of `[A-Za-z0-9._:-]`",
        summary: "Tenant of a partner created without `tenantId` (`--tenant` for heraldctl).")
    public static let defaultRateLimitPerMinute = Setting(
        "HERALD_DEFAULT_RATE_LIMIT_PER_MINUTE", .partners, readers: [.intake, .heraldctl], default: .integer(60),
        range: PartnerRules.rateLimitPerMinuteRange, summary: "Per-minute limit of a partner created without one.")
    public static let defaultRateLimitPerDay = Setting(
        "HERALD_DEFAULT_RATE_LIMIT_PER_DAY", .partners, readers: [.intake, .heraldctl], default: .integer(10_000),
        range: PartnerRules.rateLimitPerDayRange, summary: "Per-day limit of a partner created without one.")

    // MARK: Outbound HTTPS: icons and webhooks

    public static let webhookAllowPrivate = Setting(
        "HERALD_WEBHOOK_ALLOW_PRIVATE", .outbound, readers: [.intake, .worker, .heraldctl], default: .flag(false),
        format: "`0` or `1`",
        summary: """
            `1` lets icon fetches (`iconUrl`) and delivery webhooks reach loopback, private, link-local and CGNAT \
            addresses (tests, sandboxes); otherwise every address they connect to must be public. Cloud metadata \
            addresses are refused always.
            """)
    public static let caFile = Setting(
        "HERALD_CA_FILE", .outbound, readers: [.intake, .worker, .heraldctl], default: .unset,
        format: "path of a PEM file",
        summary: """
            An extra trusted CA certificate (PEM), e.g. the simulator's, for icon fetches, APNs, FCM and delivery \
            webhooks; the system's CAs stay trusted.
            """)

    // MARK: heraldctl

    static let heraldctlOnly: [Setting] = [migrationsDirectory, backfillBatchSize]

    /// Read by Store's `Migrator.bundled`, which heraldctl's `migrate` runs.
    public static let migrationsDirectory = Setting(
        "HERALD_MIGRATIONS_DIR", .heraldctl, readers: [.heraldctl],
        default: .derived("the bundled folder (docs/operations.md, *Migrations*)"), format: "a folder path",
        summary: "Folder of `NNN_name.sql` migrations for `migrate`.")
    public static let backfillBatchSize = Setting(
        "HERALD_BACKFILL_BATCH_SIZE", .heraldctl, readers: [.heraldctl], default: .integer(1_000), range: 1...10_000,
        summary: "Lines per transaction of `backfill sends` and `backfill users`.")
}
