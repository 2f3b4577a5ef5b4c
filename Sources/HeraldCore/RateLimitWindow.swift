/// Sliding-window arithmetic shared by the Postgres reservation (which decides atomically) and
/// the intake (which turns its answer into `Retry-After`).
///
/// The minute window counts per-second buckets over the last 60 seconds; the day window counts
/// per-minute buckets over the last 1,440 minutes. A request is admitted when both counts are
/// below their limits.
public struct RateLimitWindow: Sendable, Equatable {
    public let limit: Int
    public let bucketSeconds: Int
    public let bucketCount: Int

    public static func perMinute(_ limit: Int) -> RateLimitWindow {
        RateLimitWindow(limit: limit, bucketSeconds: 1, bucketCount: 60)
    }

    public static func perDay(_ limit: Int) -> RateLimitWindow {
        RateLimitWindow(limit: limit, bucketSeconds: 60, bucketCount: 1_440)
    }

    public var lengthSeconds: Int { bucketSeconds * bucketCount }

    /// The bucket index a time (UNIX seconds) falls in.
    public func bucket(at unixSeconds: Int) -> Int { unixSeconds / bucketSeconds }

    /// Whether a bucket still counts at `unixSeconds`.
    public func contains(bucket: Int, at unixSeconds: Int) -> Bool {
        bucket > self.bucket(at: unixSeconds) - bucketCount
    }

    /// Seconds until a rejected caller can expect a free slot: when the oldest counted bucket
    /// leaves the window. At least 1.
    public func retryAfter(oldestBucket: Int, at unixSeconds: Int) -> Int {
        max(1, (oldestBucket + bucketCount) * bucketSeconds - unixSeconds)
    }
}
