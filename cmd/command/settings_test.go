package command_test

import (
	"context"
	"flag"
	"strings"

	"github.com/wpsidecar/wpsidecar/store/fieldgrouptable"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/cmd/command"
	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/domain/exportdir"
	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/domain/themeoption"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/fieldmgr"
	"github.com/wpsidecar/wpsidecar/web/themeopts"
)

// settings reads a command's settings from its flags alone, as
// cmd/wpsidecar does (commandSettings there; the object cache aside: these
// sites have none).
func settings() command.Settings {
	return func(args []string, flags func(*flag.FlagSet), reads command.Reads) (command.Options, []string, error) {
		if reads == command.ReadsFlags {
			pos, err := config.ParseCommandFlags(args, flags)
			return command.Options{}, pos, err
		}
		cfg, pos, err := config.LoadCommand(args, nil, flags, reads == command.ReadsDatabase)
		if err != nil {
			return command.Options{}, nil, err
		}
		network, addr := cfg.DB.Address()
		return command.Options{
			DB: store.Options{Net: network, Addr: addr, User: cfg.DB.User, Password: cfg.DB.Password, DBName: cfg.DB.Name,
				Charset: cfg.DB.Charset, Collation: cfg.DB.Collate, TablePrefix: cfg.TablePrefix, Multisite: cfg.Multisite,
				Timeout: cfg.DB.Timeout, History: !cfg.History.Off, HistoryUnits: testdb.HistoryUnits()},
			Network: multisite.Constants{Defined: cfg.Network.Domain != "" && cfg.Network.Path != "",
				Domain: cfg.Network.Domain, Path: cfg.Network.Path, NetworkID: int64(cfg.Network.ID), Subdomain: cfg.Network.Subdomain},
			PublicRoutes: cfg.PublicRoutes,
			Units:        wpsidecar.Units{fieldgroup.Unit{}, themeoption.Unit{}},
			Parts: func() (command.PartsOf, error) {
				t, _, err := themeopts.Open(themeopts.Paths{All: cfg.ThemeoptsConfig}, zerolog.Nop(), func(func(context.Context)) {})
				if err != nil {
					return nil, err
				}
				return func(view *store.DB, ms *multisite.Site) ([]exportdir.Part, error) {
					g, err := fieldgrouptable.Open(view, view.Table(strings.TrimPrefix(cfg.FieldmgrTable, cfg.TablePrefix)))
					var opts *themeoption.Config
					if f := t.Of(ms); f != nil {
						opts = f.Current()
					}
					return []exportdir.Part{fieldmgr.Part{Table: g}, themeopts.Part{DB: view, Config: opts}}, err
				}, nil
			},
		}, pos, nil
	}
}
