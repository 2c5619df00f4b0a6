import AdobePassClient
import Foundation
import RegcodeEngine
import Testing

@Suite("AdobePassResponseParser MVPD platform fields")
struct MVPDPlatformFieldsTests {
    static func parse(_ body: String, profile: APIProfile) -> Result<BackendResponse, BackendFailure> {
        AdobePassResponseParser.parse(
            request: .configuration,
            profile: profile,
            status: 200,
            retryAfter: nil,
            body: Data(body.utf8),
            now: Date(timeIntervalSince1970: 1_445_412_480)
        )
    }

    @Test func v2ConfigurationCarriesPlatformFields() {
        let body = #"""
            {"requestor":{"id":"REF30","mvpds":[
              {"id":"Cablevision","displayName":"Optimum","logoUrl":"https://l/c.png","boardingStatus":"SUPPORTED",
               "platformMappingId":"Cablevision","enablePlatformServices":true,"displayInPlatformPicker":true,
               "enforcePlatformPermissions":false},
              {"id":"Dish","displayName":"DISH","boardingStatus":"PICKER","platformMappingId":"apple.dish"},
              {"id":"Odd","displayName":"Odd","boardingStatus":"SOMETHING","platformMappingId":"","enablePlatformServices":"yes"},
              {"id":"Plain","displayName":"Plain"}
            ]}}
            """#
        #expect(
            Self.parse(body, profile: .v2)
                == .success(
                    .configuration(mvpds: [
                        MVPD(
                            id: "Cablevision",
                            displayName: "Optimum",
                            logoURL: "https://l/c.png",
                            platformMappingId: "Cablevision",
                            boardingStatus: .supported,
                            enablePlatformServices: true,
                            displayInPlatformPicker: true,
                            enforcePlatformPermissions: false
                        ),
                        MVPD(id: "Dish", displayName: "DISH", platformMappingId: "apple.dish", boardingStatus: .picker),
                        MVPD(id: "Odd", displayName: "Odd"),
                        MVPD(id: "Plain", displayName: "Plain"),
                    ])
                )
        )
    }

    @Test func v1ListAcceptsFlagsAsText() {
        let body = #"""
            {"requestor":{"id":"REF30","mvpds":{"mvpd":[
              {"id":"A","displayName":"Alpha","boardingStatus":"SUPPORTED","platformMappingId":"apple.a",
               "enablePlatformServices":"true","displayInPlatformPicker":"false","enforcePlatformPermissions":"false",
               "requiredMetadataFields":["uid"]},
              {"id":"B","displayName":"Beta"}
            ]}}}
            """#
        #expect(
            Self.parse(body, profile: .v1)
                == .success(
                    .configuration(mvpds: [
                        MVPD(
                            id: "A",
                            displayName: "Alpha",
                            platformMappingId: "apple.a",
                            boardingStatus: .supported,
                            enablePlatformServices: true,
                            enforcePlatformPermissions: false
                        ),
                        MVPD(id: "B", displayName: "Beta"),
                    ])
                )
        )
    }

    @Test func mvpdWithoutPlatformFieldsGetsTheDefaults() {
        guard case .success(.configuration(let mvpds)) = Self.parse(#"{"requestor":{"mvpds":[{"id":"P"}]}}"#, profile: .v2),
            let mvpd = mvpds.first
        else {
            Issue.record("expected a configuration")
            return
        }
        #expect(mvpd.platformMappingId == nil)
        #expect(mvpd.boardingStatus == nil)
        #expect(!mvpd.enablePlatformServices)
        #expect(!mvpd.displayInPlatformPicker)
        #expect(mvpd.enforcePlatformPermissions)
    }
}
