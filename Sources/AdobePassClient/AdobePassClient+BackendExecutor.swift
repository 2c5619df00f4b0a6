import RegcodeEngine

extension AdobePassClient: BackendExecutor {}
