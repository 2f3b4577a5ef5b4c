import HeraldCore
import Testing

@Suite("Errors with a stable code")
struct CodedErrorTests {
    enum ProbeCode: String, FailureCode {
        case timedOut = "timed_out"
    }

    enum ProbeSetting: String, ClientSetting {
        case keyFile
        static var service: String { "Probe" }
    }

    @Test("a coded error describes itself as its code's raw value and its message, and compares by both")
    func codedErrorDescription() {
        let error = CodedError<ProbeCode>(.timedOut, "no answer within 5 s")
        #expect(error.description == "timed_out: no answer within 5 s")
        #expect(error == CodedError(.timedOut, "no answer within 5 s"))
        #expect(error != CodedError(.timedOut, "no answer"))
    }

    @Test("a setting error names the service, the setting and the code, never more than its message")
    func settingErrorDescription() {
        let error = SettingError<ProbeSetting>(.keyFile, .invalidKey, "is not a private key")
        #expect(error.description == "Probe keyFile is not a private key (invalid_key)")
        #expect(error.setting == .keyFile && error.code == .invalidKey)
    }
}
