package oci

// exampleParams builds a working provider with no outside service: the
// conformance test and the docs use it.
const exampleParams = `snapshot:
  - {instanceId: ocid1.instance.oc1.iad.gb01, name: gb01, availabilityDomain: "Uocm:US-ASHBURN-AD-1", hpcIsland: island-1, networkBlock: nb-1, localBlock: lb-1, gpuMemoryFabric: fabric-1, rack: R12}
  - {instanceId: ocid1.instance.oc1.iad.gb02, name: gb02, availabilityDomain: "Uocm:US-ASHBURN-AD-1", hpcIsland: island-1, networkBlock: nb-1, localBlock: lb-1, gpuMemoryFabric: fabric-1, rack: R12}
  - {instanceId: ocid1.instance.oc1.iad.gb03, name: gb03, availabilityDomain: "Uocm:US-ASHBURN-AD-1", hpcIsland: island-1, networkBlock: nb-1, localBlock: lb-2, gpuMemoryFabric: fabric-2, rack: R13}
`
