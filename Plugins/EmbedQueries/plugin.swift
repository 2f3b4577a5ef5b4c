import Foundation
import PackagePlugin

/// Embeds the target's `Queries/*.sql` (named queries) into one generated Swift file at build time, so the SQL
/// stays in .sql files and a query's name is checked by the compiler (Sources/embed-queries/main.swift).
@main
struct EmbedQueries: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let folder = target.directoryURL.appending(path: "Queries")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".sql") }
            .sorted()
            .map { folder.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "Queries.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) query files of \(target.name)",
                executable: try context.tool(named: "embed-queries").url,
                arguments: [output.path] + files.map(\.path),
                inputFiles: files,
                outputFiles: [output])
        ]
    }
}
