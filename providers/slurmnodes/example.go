package slurmnodes

// exampleParams is the factory's example: Slurm 24.11's JSON listing of
// four nodes, given inline, discovered by the sim provider's bundled
// small-tree model (which knows them by name).
const exampleParams = `instanceID: none
outputText: |
  {"nodes": [
    {"name": "gpu001", "partitions": ["gpu"], "features": ["h100"], "comment": "", "extra": "", "instance_id": ""},
    {"name": "gpu002", "partitions": ["gpu"], "features": ["h100"], "comment": "", "extra": "", "instance_id": ""},
    {"name": "gpu009", "partitions": ["gpu"], "features": ["h100"], "comment": "", "extra": "", "instance_id": ""},
    {"name": "gpu010", "partitions": ["gpu", "debug"], "features": ["h100"], "comment": "", "extra": "", "instance_id": ""}
  ], "errors": [], "warnings": []}
provider:
  name: sim
  params:
    model: small-tree
`
