import Foundation
import HTTP2
import Testing

@Suite struct RetryAfterTests {
    let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT

    @Test func delaySecondsAndHTTPDates() {
        #expect(RetryAfter.parse("120", now: now) == .seconds(120))
        #expect(RetryAfter.parse(" 5 ", now: now) == .seconds(5))
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:50:37 GMT", now: now) == .seconds(60))
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:00:00 GMT", now: now) == .zero)
    }

    @Test func absentOrMalformedValuesAreIgnored() {
        #expect(RetryAfter.parse(nil, now: now) == nil)
        #expect(RetryAfter.parse("", now: now) == nil)
        #expect(RetryAfter.parse("-1", now: now) == nil)
        #expect(RetryAfter.parse("soon", now: now) == nil)
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 25:00:00 GMT", now: now) == nil)
    }

    @Test func aValueTooLargeForInt64IsStillAVeryLongWait() {
        #expect(RetryAfter.parse("99999999999999999999999", now: now) == .seconds(Int64.max))
    }
}
