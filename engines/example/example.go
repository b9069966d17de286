package example

// exampleParams builds a working engine that needs no outside service
// (it writes to standard output): the conformance test and the docs use
// it.
const exampleParams = `separator: " / "
unplaced: omit
`
