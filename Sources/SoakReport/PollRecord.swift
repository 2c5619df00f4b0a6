import RegcodeRecords

/// One logged poll, as the report reads it: the engine's `PollAttempt` and its device.
package typealias PollRecord = PollLogEntry
