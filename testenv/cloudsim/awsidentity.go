package cloudsim

import (
	"encoding/json"
	"encoding/xml"
	"net/http"
	"strings"
	"time"
)

// Key is a set of AWS credentials an identity emulator hands out.
type Key struct {
	AccessKeyID, SecretAccessKey, SessionToken string
}

// expiry is when handed-out credentials expire: far enough that no test
// refreshes them.
func expiry() string { return time.Now().Add(6 * time.Hour).UTC().Format(time.RFC3339) }

// STS emulates AssumeRoleWithWebIdentity (IRSA): a request with RoleARN
// and Token gets Key; anything else is refused as STS refuses it.
type STS struct {
	RoleARN, Token string
	Key            Key
}

type stsCredentials struct {
	AccessKeyID     string `xml:"AccessKeyId"`
	SecretAccessKey string `xml:"SecretAccessKey"`
	SessionToken    string `xml:"SessionToken"`
	Expiration      string `xml:"Expiration"`
}

type stsResponse struct {
	XMLName xml.Name `xml:"AssumeRoleWithWebIdentityResponse"`
	Xmlns   string   `xml:"xmlns,attr"`
	Result  struct {
		Credentials stsCredentials `xml:"Credentials"`
		Subject     string         `xml:"SubjectFromWebIdentityToken"`
		User        struct {
			Arn string `xml:"Arn"`
			ID  string `xml:"AssumedRoleId"`
		} `xml:"AssumedRoleUser"`
	} `xml:"AssumeRoleWithWebIdentityResult"`
	RequestID string `xml:"ResponseMetadata>RequestId"`
}

// ServeHTTP implements http.Handler.
func (s *STS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil || r.PostForm.Get("Action") != "AssumeRoleWithWebIdentity" {
		stsError(w, http.StatusBadRequest, "InvalidAction", "want a form POST of AssumeRoleWithWebIdentity")
		return
	}
	f := r.PostForm
	if f.Get("RoleArn") != s.RoleARN || f.Get("WebIdentityToken") != s.Token || f.Get("RoleSessionName") == "" {
		stsError(w, http.StatusBadRequest, "InvalidIdentityToken", "the web identity token or role is not valid")
		return
	}
	var resp stsResponse
	resp.Xmlns = "https://sts.amazonaws.com/doc/2011-06-15/"
	resp.Result.Credentials = stsCredentials{AccessKeyID: s.Key.AccessKeyID, SecretAccessKey: s.Key.SecretAccessKey,
		SessionToken: s.Key.SessionToken, Expiration: expiry()}
	resp.Result.Subject = "system:serviceaccount:toposcope:toposcope"
	resp.Result.User.Arn = s.RoleARN + "/" + f.Get("RoleSessionName")
	resp.Result.User.ID = "AROASIM:" + f.Get("RoleSessionName")
	resp.RequestID = "sim-sts"
	w.Header().Set("Content-Type", "text/xml")
	_, _ = w.Write([]byte(xml.Header))
	_ = xml.NewEncoder(w).Encode(resp)
}

func stsError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>` +
		code + `</Code><Message>` + msg + `</Message></Error><RequestId>sim-sts</RequestId></ErrorResponse>`))
}

// ContainerCredentials emulates the container credentials endpoint of
// EKS Pod Identity (and ECS): a GET with the Authorization token gets Key
// as JSON.
type ContainerCredentials struct {
	AuthToken string
	Key       Key
}

// ServeHTTP implements http.Handler.
func (c *ContainerCredentials) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || r.Header.Get("Authorization") != c.AuthToken {
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]string{"code": "AccessDeniedException", "message": "invalid token"})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"AccessKeyId": c.Key.AccessKeyID, "SecretAccessKey": c.Key.SecretAccessKey,
		"Token": c.Key.SessionToken, "AccountId": "000000000000", "Expiration": expiry()})
}

// roleCredentials answers IMDS's instance-role paths
// (/latest/meta-data/iam/security-credentials/[role]).
func (m *IMDS) roleCredentials(w http.ResponseWriter, rest string) {
	switch {
	case m.Role == "":
		http.NotFound(w, nil)
	case rest == "":
		_, _ = w.Write([]byte(m.Role))
	case strings.TrimSuffix(rest, "/") == m.Role:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"Code": "Success", "Type": "AWS-HMAC",
			"LastUpdated": time.Now().UTC().Format(time.RFC3339), "AccessKeyId": m.RoleKey.AccessKeyID,
			"SecretAccessKey": m.RoleKey.SecretAccessKey, "Token": m.RoleKey.SessionToken, "Expiration": expiry()})
	default:
		http.NotFound(w, nil)
	}
}
