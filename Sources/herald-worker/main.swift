import Foundation
import HeraldCore
import PostgresLogging
import ServiceSupport
import Worker

// herald-worker: configuration from the environment, deliver until SIGTERM or SIGINT, then drain.
ServiceArguments.handle(Array(CommandLine.arguments.dropFirst()), program: "herald-worker")
TerminationSignals.block()

let configuration: WorkerConfiguration
let upstreams: [PushService: any DeliveryUpstream]
do {
    configuration = try WorkerConfiguration.fromEnvironment()
    upstreams = try WorkerUpstreams.make(configuration)
} catch {
    FileHandle.standardError.write(Data("herald-worker: configuration error: \(error)\n".utf8))
    exit(2)
}

// The server's notices (a FATAL as a restart closes a connection) join the JSON log instead of stderr.
Logger(component: "worker", minimum: configuration.logLevel).takePostgresNotices()

let worker = DeliveryWorker(configuration: configuration, upstreams: upstreams)
let health: WorkerHealthServer
do {
    health = try WorkerHealthServer(worker: worker, port: configuration.metricsPort)
} catch {
    FileHandle.standardError.write(Data("herald-worker: cannot listen on HERALD_WORKER_METRICS_PORT: \(error)\n".utf8))
    exit(1)
}
worker.start()

TerminationSignals.wait()
// Stop claiming, let what is in flight finish (up to HERALD_DRAIN_SECONDS), release the rest.
worker.drain()
health.stop()
exit(0)
