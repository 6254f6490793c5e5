package authn

import (
	"context"
	"fmt"

	apiserverapi "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/apiserver/plugin/pkg/authenticator/token/oidc"
)

// oidc turns the --oidc-* flags into the library's JWT authenticator
// configuration, with upstream's prefix defaults.
func (o *Options) oidc(ctx context.Context, config *genericapiserver.Config) (authenticator.Token, error) {
	oi := o.OIDC
	jwt := apiserverapi.JWTAuthenticator{
		Issuer: apiserverapi.Issuer{
			URL:                 oi.IssuerURL,
			Audiences:           []string{oi.ClientID},
			AudienceMatchPolicy: apiserverapi.AudienceMatchPolicyMatchAny,
		},
		ClaimMappings: apiserverapi.ClaimMappings{
			Username: apiserverapi.PrefixedClaimOrExpression{Claim: oi.UsernameClaim, Prefix: oidcUsernamePrefix(oi)},
		},
	}
	if oi.GroupsClaim != "" {
		prefix := oi.GroupsPrefix
		jwt.ClaimMappings.Groups = apiserverapi.PrefixedClaimOrExpression{Claim: oi.GroupsClaim, Prefix: &prefix}
	}
	for claim, value := range oi.RequiredClaims {
		jwt.ClaimValidationRules = append(jwt.ClaimValidationRules, apiserverapi.ClaimValidationRule{Claim: claim, RequiredValue: value})
	}
	opts := oidc.Options{
		JWTAuthenticator:     jwt,
		SupportedSigningAlgs: oi.SigningAlgs,
		// An OIDC provider must not mint tokens that look like ours.
		DisallowedIssuers: o.issuers(),
		APIServerID:       config.APIServerID,
	}
	if oi.CAFile != "" {
		ca, err := dynamiccertificates.NewDynamicCAContentFromFile("oidc-authenticator", oi.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--oidc-ca-file: %w", err)
		}
		opts.CAContentProvider = ca
	}
	t, err := oidc.New(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("oidc authenticator: %w", err)
	}
	return t, nil
}

// oidcUsernamePrefix applies upstream's rule: "-" means no prefix; an empty
// prefix means "<issuer>#" unless the claim is email, which is unique
// across issuers anyway.
func oidcUsernamePrefix(oi OIDCOptions) *string {
	p := oi.UsernamePrefix
	switch {
	case p == "-":
		p = ""
	case p == "" && oi.UsernameClaim != "email":
		p = oi.IssuerURL + "#"
	}
	return &p
}
