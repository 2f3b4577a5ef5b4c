/// The release every executable reports (`--version`), the liveness answers carry and the images are labelled with.
/// One place: CHANGELOG.md's newest entry and the Containerfiles' `org.opencontainers.image.version` label name the
/// same release (`ReleaseTests`); a release tags its commit `v<version>` (docs/operations.md, *Releases*).
public enum HeraldVersion {
    public static let current = "0.9.0"
}
