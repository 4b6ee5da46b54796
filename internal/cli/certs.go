package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/internal/certs"
)

func newCertsCmd(gs *GlobalState) *cobra.Command {
	var dir, hosts string
	cmd := &cobra.Command{
		Use:   "certs --dir DIR --hosts HOST[,HOST...]",
		Short: "Write a CA, agent server certificates and a coordinator client certificate for mutual TLS",
		Long: `Writes DIR/ca.pem and DIR/ca-key.pem (a 10-year ECDSA P-256 CA), for each
host DIR/HOST/agent.pem and DIR/HOST/agent-key.pem (server certificate for
that name or address only, 2 years), and DIR/coordinator.pem and
DIR/coordinator-key.pem (client certificate, 2 years). Private keys are
mode 0600. Running it again adds the hosts that are missing and keeps the
CA and every certificate already there. Give the agent
--tls-cert DIR/HOST/agent.pem --tls-key DIR/HOST/agent-key.pem --tls-ca DIR/ca.pem
and the coordinator
--tls-cert DIR/coordinator.pem --tls-key DIR/coordinator-key.pem --tls-ca DIR/ca.pem.
The coordinator must dial each agent by the name given here.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				return invalid(errors.New("flag --dir: expected the directory to write the certificates to"))
			}
			var list []string
			for _, h := range strings.Split(hosts, ",") {
				if h = strings.TrimSpace(h); h != "" {
					list = append(list, h)
				}
			}
			if err := certs.ValidateHosts(list); err != nil {
				return invalid(fmt.Errorf("flag --hosts: %w", err))
			}
			res, err := certs.Generate(dir, list, gs.Clock.Now())
			if err != nil {
				return invalid(fmt.Errorf("flag --dir %s: %w", dir, err))
			}
			for _, f := range res.Created {
				fmt.Fprintf(gs.Stdout, "wrote %s\n", f)
			}
			if len(res.Created) == 0 {
				fmt.Fprintf(gs.Stdout, "%s: every certificate is already there\n", dir)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "directory for the CA, the agents' and the coordinator's certificates")
	cmd.Flags().StringVar(&hosts, "hosts", "", "comma-separated agent host names or addresses, exactly as the coordinator dials them")
	return cmd
}
