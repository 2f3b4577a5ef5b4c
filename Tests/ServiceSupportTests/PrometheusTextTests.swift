import ServiceSupport
import Testing

@Suite("The Prometheus text writer")
struct PrometheusTextTests {
    @Test("a family opens with its HELP and TYPE lines; samples carry their labels in braces, none when unlabelled")
    func familiesAndSamples() {
        var text = PrometheusText()
        text.family("jobs_total", .counter, help: "Jobs run.")
        text.sample("jobs_total", labels: "queue=\"a\"", 2)
        text.single("in_flight", .gauge, help: "Jobs running.", 3)
        text.sample("age_seconds", 0.5)
        #expect(
            text.text == """
                # HELP jobs_total Jobs run.
                # TYPE jobs_total counter
                jobs_total{queue="a"} 2
                # HELP in_flight Jobs running.
                # TYPE in_flight gauge
                in_flight 3
                age_seconds 0.5

                """)
    }

    @Test("a histogram writes its buckets, sum and count under the family's name")
    func histogram() {
        var histogram = PrometheusHistogram(bounds: [1])
        histogram.observe(0.5)
        var text = PrometheusText()
        text.histogram("wait_seconds", labels: "lane=\"x\"", histogram)
        #expect(
            text.text == """
                wait_seconds_bucket{lane="x",le="1.0"} 1
                wait_seconds_bucket{lane="x",le="+Inf"} 1
                wait_seconds_sum{lane="x"} 0.5
                wait_seconds_count{lane="x"} 1

                """)
    }

    @Test("a label value has its backslashes, quotes and line feeds escaped, also a line feed after a carriage return")
    func labelEscaping() {
        #expect(PrometheusText.escaped(#"a\b"c"#) == #"a\\b\"c"#)
        #expect(PrometheusText.escaped("one\ntwo\r\nthree") == "one\\ntwo\r\\nthree")
        #expect(PrometheusText.escaped("plain") == "plain")
    }
}
