import ServiceSupport
import Testing

@Suite("The allocator")
struct AllocatorTests {
    @Test("malloc is jemalloc's, with the settings of Sources/CAllocator/CAllocator.c")
    func jemallocIsLinkedAndConfigured() throws {
        let version = try #require(Allocator.version)
        #expect(version.hasPrefix("5."))
        #expect(Allocator.name == "jemalloc \(version)")
        #expect(Allocator.dirtyDecayMilliseconds == 1_000)
    }
}
