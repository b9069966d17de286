package aws

// exampleParams is a saved answer of two p5 instances under one
// three-tier path, which needs no AWS account.
const exampleParams = `region: us-west-2
snapshot:
  - {instanceId: i-0example000001, instanceType: p5.48xlarge, availabilityZone: us-west-2a, networkNodes: [nn-core1, nn-spine1, nn-leaf1]}
  - {instanceId: i-0example000002, instanceType: p5.48xlarge, availabilityZone: us-west-2a, networkNodes: [nn-core1, nn-spine1, nn-leaf2]}
  - {instanceId: i-0example000003, instanceType: p6e-gb200.36xlarge, availabilityZone: us-west-2a, networkNodes: [nn-core1, nn-spine2, nn-leaf3], capacityBlockId: cr-0example1}
`
