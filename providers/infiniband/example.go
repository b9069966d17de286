package infiniband

import "strings"

// exampleOutput is ibnetdiscover output of a small fabric: one spine, two
// leaves, two hosts on each leaf. It is the factory's example, which needs
// no fabric.
const exampleOutput = `vendid=0x2c9
devid=0xd2f2
sysimgguid=0x2c5eab0300000100
switchguid=0x2c5eab0300000100(2c5eab0300000100)
Switch	65 "S-2c5eab0300000100"		# "MF0;SPINE-01:MQM9701/U1" enhanced port 0 lid 10 lmc 0
[1]	"S-2c5eab0300000200"[33]		# "MF0;LEAF-01:MQM9701/U1" lid 20 4xNDR
[2]	"S-2c5eab0300000300"[33]		# "MF0;LEAF-02:MQM9701/U1" lid 30 4xNDR

switchguid=0x2c5eab0300000200(2c5eab0300000200)
Switch	65 "S-2c5eab0300000200"		# "MF0;LEAF-01:MQM9701/U1" enhanced port 0 lid 20 lmc 0
[1]	"H-e09d730300000001"[1](e09d730300000001) 		# "node001 mlx5_0" lid 101 4xNDR
[2]	"H-e09d730300000002"[1](e09d730300000002) 		# "node002 mlx5_0" lid 102 4xNDR
[33]	"S-2c5eab0300000100"[1]		# "MF0;SPINE-01:MQM9701/U1" lid 10 4xNDR

switchguid=0x2c5eab0300000300(2c5eab0300000300)
Switch	65 "S-2c5eab0300000300"		# "MF0;LEAF-02:MQM9701/U1" enhanced port 0 lid 30 lmc 0
[1]	"H-e09d730300000003"[1](e09d730300000003) 		# "node003 mlx5_0" lid 103 4xNDR
[2]	"H-e09d730300000004"[1](e09d730300000004) 		# "node004 mlx5_0" lid 104 4xNDR
[33]	"S-2c5eab0300000100"[2]		# "MF0;SPINE-01:MQM9701/U1" lid 10 4xNDR

caguid=0xe09d730300000001
Ca	1 "H-e09d730300000001"		# "node001 mlx5_0"
[1](e09d730300000001) 	"S-2c5eab0300000200"[1]		# lid 101 lmc 0 "MF0;LEAF-01:MQM9701/U1" lid 20 4xNDR

caguid=0xe09d730300000002
Ca	1 "H-e09d730300000002"		# "node002 mlx5_0"
[1](e09d730300000002) 	"S-2c5eab0300000200"[2]		# lid 102 lmc 0 "MF0;LEAF-01:MQM9701/U1" lid 20 4xNDR

caguid=0xe09d730300000003
Ca	1 "H-e09d730300000003"		# "node003 mlx5_0"
[1](e09d730300000003) 	"S-2c5eab0300000300"[1]		# lid 103 lmc 0 "MF0;LEAF-02:MQM9701/U1" lid 30 4xNDR

caguid=0xe09d730300000004
Ca	1 "H-e09d730300000004"		# "node004 mlx5_0"
[1](e09d730300000004) 	"S-2c5eab0300000300"[2]		# lid 104 lmc 0 "MF0;LEAF-02:MQM9701/U1" lid 30 4xNDR
`

// exampleParams returns the factory's example: the output above, inline.
func exampleParams() string {
	return "outputText: |\n  " + strings.ReplaceAll(strings.TrimSuffix(exampleOutput, "\n"), "\n", "\n  ") + "\n"
}
