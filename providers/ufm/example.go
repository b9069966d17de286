package ufm

// exampleParams is the factory's example: a UFM snapshot inline (one
// spine, two leaves, two hosts each), which needs no server.
const exampleParams = `snapshot:
  systems:
    - {system_name: spine-01, guid: "2c5eab0300000100", type: switch}
    - {system_name: leaf-01, guid: "2c5eab0300000200", type: switch}
    - {system_name: leaf-02, guid: "2c5eab0300000300", type: switch}
    - {system_name: node001, guid: "e09d730300000001", type: host}
    - {system_name: node002, guid: "e09d730300000002", type: host}
    - {system_name: node003, guid: "e09d730300000003", type: host}
    - {system_name: node004, guid: "e09d730300000004", type: host}
  links:
    - {source_guid: "2c5eab0300000200", source_port: "33", destination_guid: "2c5eab0300000100", destination_port: "1", width: 4x, speed: NDR}
    - {source_guid: "2c5eab0300000300", source_port: "33", destination_guid: "2c5eab0300000100", destination_port: "2", width: 4x, speed: NDR}
    - {source_guid: "e09d730300000001", source_port: "1", destination_guid: "2c5eab0300000200", destination_port: "1", width: 4x}
    - {source_guid: "e09d730300000002", source_port: "1", destination_guid: "2c5eab0300000200", destination_port: "2", width: 4x}
    - {source_guid: "e09d730300000003", source_port: "1", destination_guid: "2c5eab0300000300", destination_port: "1", width: 4x}
    - {source_guid: "e09d730300000004", source_port: "1", destination_guid: "2c5eab0300000300", destination_port: "2", width: 4x}
`
