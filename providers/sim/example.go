package sim

// exampleParams builds a working provider with no outside service: the
// conformance test and the docs use it.
const exampleParams = "model: small-tree\n"
