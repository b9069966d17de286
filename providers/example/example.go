package example

// exampleParams builds a working provider: the conformance test and the
// docs use it.
const exampleParams = `nodes:
  - {name: gpu001, gpus: 8, path: [leaf1, spine1], domain: nvl1}
  - {name: gpu002, gpus: 8, path: [leaf1, spine1], domain: nvl1}
  - {name: gpu003, gpus: 8, path: [leaf2, spine1]}
`
