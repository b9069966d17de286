package lldp

// exampleParams is the factory's example: two hosts' reports inline, each
// with its two fabric NICs' LLDP neighbors (two rails), no SNMP: one
// leaf group.
const exampleParams = `reports:
  - node: gpu-001
    gpus: 8
    lldp:
      - {interface: ens4f0np0, chassisID: "0c:42:a1:00:00:01", chassisIDType: mac, sysName: leaf-r0-01, portID: swp1, portIDType: ifname}
      - {interface: ens5f0np0, chassisID: "0c:42:a1:00:01:01", chassisIDType: mac, sysName: leaf-r1-01, portID: swp1, portIDType: ifname}
  - node: gpu-002
    gpus: 8
    lldp:
      - {interface: ens4f0np0, chassisID: "0c:42:a1:00:00:01", chassisIDType: mac, sysName: leaf-r0-01, portID: swp2, portIDType: ifname}
      - {interface: ens5f0np0, chassisID: "0c:42:a1:00:01:01", chassisIDType: mac, sysName: leaf-r1-01, portID: swp2, portIDType: ifname}
`
