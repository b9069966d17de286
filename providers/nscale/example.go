package nscale

// exampleParams builds a working provider with no outside service: the
// conformance test and the docs use it.
const exampleParams = `snapshot:
  - {instance_id: node001, network_node_path: [core-1, spine-1, leaf-1], block_id: nvl-1}
  - {instance_id: node002, network_node_path: [core-1, spine-1, leaf-1], block_id: nvl-1}
  - {instance_id: node003, network_node_path: [core-1, spine-1, leaf-2]}
`
