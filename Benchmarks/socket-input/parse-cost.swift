// CPU per MB of the control socket's JSON reader, shape by shape, on a release (-O, whole-module) build of
// Sources/RegcodeSupport. Built and run by parse-cost.sh; prints one Markdown row per shape.
import Foundation

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func request(_ params: String) -> [UInt8] {
    Array(#"{"jsonrpc":"2.0","id":1,"method":"echo","params":\#(params)}"#.utf8)
}

func list(_ count: Int, _ item: (Int) -> String) -> String {
    "[" + (0..<count).map(item).joined(separator: ",") + "]"
}

let chain = String(repeating: "[", count: 26) + String(repeating: "]", count: 26)
let long = "\"" + String(repeating: "abcdefghij", count: 6400) + "\""

/// About 1 MB each, within the limits before the value limit; the first is the 969 KB line of 17,000 arrays 28 deep.
let shapes: [(String, [UInt8])] = [
    ("deep-wide arrays (17,000 × 28)", request(list(17) { _ in list(1000) { _ in chain } })),
    ("many members (95 × 1,000)", request(list(95) { _ in "{" + (0..<1000).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}" })),
    ("numbers (80,000)", request(list(80) { _ in list(1000) { "-\($0 * 7919 % 100000).25e-3" } })),
    ("escapes and surrogate pairs", request(list(16) { _ in "\"" + String(repeating: #"\u00e9\ud83d\ude00\n"#, count: 3200) + "\"" })),
    ("long strings (16 × 64 KB)", request(list(16) { _ in long })),
    // Within every limit, the value limit included: as many arrays as it allows, the rest long strings.
    ("heaviest legal: 15,600 arrays + strings", request("[" + list(600) { _ in chain } + "," + list(14) { _ in long } + "]")),
    ("deep-wide at the value limit alone", request(list(600) { _ in chain })),
]

print("| shape | bytes | answer | CPU ms per line | CPU ms per MB |")
print("|---|---|---|---|---|")
for (name, bytes) in shapes {
    var best = Double.infinity
    var answer = "parsed"
    for _ in 0..<7 {
        let start = cpuSeconds()
        do {
            _ = try JSONValueParser.parse(bytes, limits: InputLimits(), numbers: .integralAsInt)
        } catch {
            answer = "refused: \(error)"
        }
        best = min(best, cpuSeconds() - start)
    }
    let megabytes = Double(bytes.count) / 1e6
    print(String(format: "| %@ | %d | %@ | %.2f | %.2f |", name as NSString, bytes.count, answer as NSString, best * 1000, best * 1000 / megabytes))
}
