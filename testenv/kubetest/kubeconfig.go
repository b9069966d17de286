package kubetest

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// WriteKubeconfig writes a kubeconfig file at path for the bearer token
// and CA file of rc (for example AdminConfig(), or TokenConfig of a
// ServiceAccount token), for tools and plugins that read a kubeconfig:
// helm, the CLI, a plugin's kubeconfig parameter.
func WriteKubeconfig(path string, rc *rest.Config) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthority: rc.CAFile}
	cfg.AuthInfos["user"] = &clientcmdapi.AuthInfo{Token: rc.BearerToken}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "user"}
	cfg.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("kubetest: %w", err)
	}
	return nil
}
