package agents

// exampleParams is the factory's example: two GB200 trays of one NVL72
// domain and a PCIe node, given inline, which needs no server.
const exampleParams = `reports:
  - node: gb200-01
    gpus: 4
    clique: 7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab.32766
    rack: "1821324000117"
    hcas: [{name: mlx5_0, nodeGUID: 0c42a10300a1b2c3}]
  - node: gb200-02
    gpus: 4
    clique: 7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab.32766
    rack: "1821324000117"
  - node: l40s-01
    gpus: 8
`
