import ServiceSupport
import Testing

@Suite("The file descriptor limit")
struct FileDescriptorLimitTests {
    @Test("the soft limit is raised to the hard one")
    func raisedToHard() {
        let raised = FileDescriptorLimit.raiseToHard()
        #expect(raised.soft == raised.hard)
        #expect(raised == FileDescriptorLimit.current())
        #expect(raised.soft >= 1_024)
    }
}
