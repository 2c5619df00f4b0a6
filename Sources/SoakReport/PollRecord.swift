import RegcodeRecords

/// One logged poll, as the report reads it: the engine's `PollAttempt` and its device.
public typealias PollRecord = PollLogEntry
