package nebius

// exampleParams builds a working provider with no outside service: the
// conformance test and the docs use it.
const exampleParams = `snapshot:
  - {id: computeinstance-e00example01, path: [ib-root1, ib-spine1, ib-leaf1], nvlInstanceGroupId: nvlgroup-e00example1}
  - {id: computeinstance-e00example02, path: [ib-root1, ib-spine1, ib-leaf1], nvlInstanceGroupId: nvlgroup-e00example1}
  - {id: computeinstance-e00example03, path: [ib-root1, ib-spine1, ib-leaf2]}
`
