package nvlink

// exampleParams is the factory's example: nvidia-smi CSV output inline
// for two GB200 trays of one NVL72 domain and a PCIe node with no
// fabric, which needs no GPU.
const exampleParams = `outputs:
  gb200-01: |
    7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab, 32766
    7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab, 32766
    7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab, 32766
    7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab, 32766
  gb200-02: |
    7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab, 32766
    7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab, 32766
    7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab, 32766
    7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab, 32766
  l40s-01: |
    [N/A], [N/A]
    [N/A], [N/A]
`
