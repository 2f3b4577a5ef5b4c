import HeraldCore
import Testing

@Suite struct RateLimitWindowTests {
    @Test func windowsHaveTheDocumentedShape() {
        let minute = RateLimitWindow.perMinute(60)
        #expect(minute.limit == 60 && minute.bucketSeconds == 1 && minute.bucketCount == 60)
        #expect(minute.lengthSeconds == 60)
        let day = RateLimitWindow.perDay(10_000)
        #expect(day.limit == 10_000 && day.bucketSeconds == 60 && day.bucketCount == 1440)
        #expect(day.lengthSeconds == 86_400)
        #expect(RateLimitWindow.perMinute(5) != RateLimitWindow.perMinute(6))
    }

    @Test func bucketsAreSecondsOrMinutes() {
        let minute = RateLimitWindow.perMinute(60)
        #expect(minute.bucket(at: 0) == 0)
        #expect(minute.bucket(at: 130) == 130)
        #expect(minute.bucket(at: 1_780_272_123) == 1_780_272_123)
        let day = RateLimitWindow.perDay(10_000)
        #expect(day.bucket(at: 0) == 0)
        #expect(day.bucket(at: 59) == 0)
        #expect(day.bucket(at: 60) == 1)
        #expect(day.bucket(at: 6_030) == 100)
        #expect(day.bucket(at: 1_780_272_119) == 29_671_201)
    }

    @Test func minuteWindowContainsTheLast60Seconds() {
        let minute = RateLimitWindow.perMinute(60)
        #expect(minute.contains(bucket: 130, at: 130))
        #expect(minute.contains(bucket: 71, at: 130))
        #expect(!minute.contains(bucket: 70, at: 130))
        #expect(!minute.contains(bucket: 0, at: 130))
        #expect((0...130).filter { minute.contains(bucket: $0, at: 130) } == Array(71...130))
    }

    @Test func dayWindowContainsTheLast1440Minutes() {
        let day = RateLimitWindow.perDay(10_000)
        let now = 100_000 * 60 + 17  // minute bucket 100000
        #expect(day.contains(bucket: 100_000, at: now))
        #expect(day.contains(bucket: 100_000 - 1439, at: now))
        #expect(!day.contains(bucket: 100_000 - 1440, at: now))
        #expect((90_000...100_000).filter { day.contains(bucket: $0, at: now) }.count == 1440)
    }

    @Test(arguments: [
        // (oldest bucket, now, expected Retry-After) for the minute window.
        (100, 130, 30), (100, 100, 60), (100, 159, 1), (100, 160, 1), (100, 200, 1), (71, 130, 1), (130, 130, 60),
    ])
    func minuteRetryAfter(_ oldest: Int, _ now: Int, _ expected: Int) {
        #expect(RateLimitWindow.perMinute(60).retryAfter(oldestBucket: oldest, at: now) == expected)
    }

    @Test(arguments: [
        // (oldest minute bucket, now in seconds, expected Retry-After).
        (100, 6_030, 86_370), (100, 6_000, 86_400), (100, 92_399, 1), (100, 92_400, 1), (0, 0, 86_400),
        (1439, 86_399, 86_341),
    ])
    func dayRetryAfter(_ oldest: Int, _ now: Int, _ expected: Int) {
        #expect(RateLimitWindow.perDay(10_000).retryAfter(oldestBucket: oldest, at: now) == expected)
    }

    @Test func retryAfterIsWhenTheOldestBucketLeavesTheWindow() {
        // For every window and a range of clocks, waiting Retry-After seconds is exactly enough:
        // the bucket has left the window then, and was still in it one second earlier.
        for window in [RateLimitWindow.perMinute(60), .perDay(10_000)] {
            for now in stride(
                from: 1_000_000, to: 1_000_000 + 2 * window.lengthSeconds, by: max(1, window.lengthSeconds / 53))
            {
                let current = window.bucket(at: now)
                let stride = max(1, window.bucketCount / 17)
                for oldest in Swift.stride(from: current - window.bucketCount + 1, through: current, by: stride) {
                    #expect(window.contains(bucket: oldest, at: now))
                    let wait = window.retryAfter(oldestBucket: oldest, at: now)
                    #expect(wait >= 1)
                    #expect(!window.contains(bucket: oldest, at: now + wait), "\(window) oldest \(oldest) at \(now)")
                    if wait > 1 {
                        #expect(
                            window.contains(bucket: oldest, at: now + wait - 1), "\(window) oldest \(oldest) at \(now)")
                    }
                }
            }
        }
    }
}
