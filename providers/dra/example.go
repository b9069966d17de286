package dra

// exampleParams builds a working provider with no cluster: the
// conformance test and the docs use it.
const exampleParams = `slices:
  - node: gb001
    devices:
      - {name: gpu-0, attributes: {clusterUUID: 5a1e0c2f-0000-4000-8000-000000000001, cliqueID: "1"}}
  - node: gb002
    devices:
      - {name: gpu-0, attributes: {clusterUUID: 5a1e0c2f-0000-4000-8000-000000000001, cliqueID: "1"}}
  - node: gb003
    devices:
      - {name: gpu-0, attributes: {clusterUUID: 5a1e0c2f-0000-4000-8000-000000000001, cliqueID: "2"}}
`
