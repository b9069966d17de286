package gcp

// exampleParams builds a working provider with no outside service: the
// conformance test and the docs use it.
const exampleParams = `snapshot:
  - {id: "5815586279631866288", name: vm-01, zone: europe-west1-b, cluster: ew1-cluster, block: blk-1, subblock: sb-1}
  - {id: "5815586279631866289", name: vm-02, zone: europe-west1-b, cluster: ew1-cluster, block: blk-1, subblock: sb-1}
  - {id: "5815586279631866290", name: vm-03, zone: europe-west1-b, cluster: ew1-cluster, block: blk-1, subblock: sb-2}
`
