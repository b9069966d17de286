package lambda

// exampleParams builds a working provider with no outside service: the
// conformance test and the docs use it.
const exampleParams = `snapshot:
  - {id: inst-01, networkPath: [leaf1, spine1, core1]}
  - {id: inst-02, networkPath: [leaf1, spine1, core1]}
  - {id: inst-03, networkPath: [leaf2, spine1, core1], domainId: nvl-1, cliqueId: "7"}
`
