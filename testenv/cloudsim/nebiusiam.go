package cloudsim

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// ServiceAccountKey is a service account's public key, as the token
// exchange knows it.
type ServiceAccountKey struct {
	ServiceAccountID string
	Key              *rsa.PublicKey
}

// exchange answers TokenExchangeService/Exchange: an RS256 JWT signed by
// a known key, with kid, iss = sub = its service account, the token
// service as audience and an unexpired exp, gets Token.
func (n *Nebius) exchange(dec func(any) error) (any, error) {
	t := nebiusIAM
	req := dynamicpb.NewMessage(t.request)
	if err := dec(req); err != nil {
		return nil, status.Error(codes.InvalidArgument, "cannot decode ExchangeTokenRequest")
	}
	f := t.request.Fields()
	get := func(name string) string { return req.Get(f.ByName(protoreflect.Name(name))).String() }
	if get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" || get("subject_token_type") != "urn:ietf:params:oauth:token-type:jwt" {
		return nil, status.Error(codes.InvalidArgument, "unsupported grant or subject token type")
	}
	if err := n.checkJWT(get("subject_token")); err != nil {
		return nil, status.Error(codes.Unauthenticated, err.Error())
	}
	n.mu.Lock()
	n.exchanges++
	n.mu.Unlock()
	resp := dynamicpb.NewMessage(t.response)
	rf := t.response.Fields()
	resp.Set(rf.ByName("access_token"), protoreflect.ValueOfString(n.Token))
	resp.Set(rf.ByName("issued_token_type"), protoreflect.ValueOfString("urn:ietf:params:oauth:token-type:access_token"))
	resp.Set(rf.ByName("token_type"), protoreflect.ValueOfString("Bearer"))
	resp.Set(rf.ByName("expires_in"), protoreflect.ValueOfInt64(3600))
	return resp, nil
}

// checkJWT verifies a service account's self-signed JWT.
func (n *Nebius) checkJWT(jwt string) error {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return fmt.Errorf("not a JWT")
	}
	enc := base64.RawURLEncoding
	var header struct{ Alg, Kid string }
	var claims struct {
		Iss, Sub string
		Aud      []string
		Iat, Exp int64
	}
	h, err1 := enc.DecodeString(parts[0])
	c, err2 := enc.DecodeString(parts[1])
	sig, err3 := enc.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || json.Unmarshal(h, &header) != nil || json.Unmarshal(c, &claims) != nil {
		return fmt.Errorf("malformed JWT")
	}
	key, ok := n.Keys[header.Kid]
	if header.Alg != "RS256" || !ok {
		return fmt.Errorf("unknown key %q or algorithm %q", header.Kid, header.Alg)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(key.Key, crypto.SHA256, sum[:], sig); err != nil {
		return fmt.Errorf("bad signature")
	}
	now := time.Now().Unix()
	switch {
	case claims.Iss != key.ServiceAccountID || claims.Sub != key.ServiceAccountID:
		return fmt.Errorf("iss and sub must be %s", key.ServiceAccountID)
	case !slices.Contains(claims.Aud, "token-service.iam.new.nebiuscloud.net"):
		return fmt.Errorf("wrong audience %v", claims.Aud)
	case claims.Exp < now || claims.Exp-claims.Iat > 3600:
		return fmt.Errorf("expired or too long-lived")
	}
	return nil
}

// nebiusIAMMessages are the token exchange's message descriptors.
type nebiusIAMMessages struct {
	request, response protoreflect.MessageDescriptor
}

// nebiusIAM is built once from nebiusIAMFile; it is read-only.
var nebiusIAM = buildNebiusIAM()

func buildNebiusIAM() nebiusIAMMessages {
	fd, err := protodesc.NewFile(nebiusIAMFile(), nil)
	if err != nil {
		panic(fmt.Sprintf("nebius iam descriptors: %v", err)) // a fixed literal; any test catches it
	}
	return nebiusIAMMessages{request: fd.Messages().ByName("ExchangeTokenRequest"), response: fd.Messages().ByName("CreateTokenResponse")}
}

// nebiusIAMFile restates nebius/iam/v1/token_service.proto's messages.
func nebiusIAMFile() *descriptorpb.FileDescriptorProto {
	str := descriptorpb.FieldDescriptorProto_TYPE_STRING
	i64 := descriptorpb.FieldDescriptorProto_TYPE_INT64
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
	rep := descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	f := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, label descriptorpb.FieldDescriptorProto_Label) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(), Label: label.Enum()}
	}
	return &descriptorpb.FileDescriptorProto{
		Name: proto.String("nebius/iam/v1/toposcope_emulator.proto"), Package: proto.String("nebius.iam.v1"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("ExchangeTokenRequest"), Field: []*descriptorpb.FieldDescriptorProto{
				f("grant_type", 1, str, opt), f("requested_token_type", 2, str, opt), f("subject_token", 3, str, opt),
				f("subject_token_type", 4, str, opt), f("scopes", 5, str, rep), f("audience", 6, str, opt),
			}},
			{Name: proto.String("CreateTokenResponse"), Field: []*descriptorpb.FieldDescriptorProto{
				f("access_token", 1, str, opt), f("issued_token_type", 2, str, opt), f("token_type", 3, str, opt),
				f("expires_in", 4, i64, opt), f("scopes", 5, str, rep),
			}},
		},
	}
}
