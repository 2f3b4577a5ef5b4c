import Foundation
import HeraldCtl

exit(HeraldCtl.run(Array(CommandLine.arguments.dropFirst())))
