package main

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"reflect"

	gormmysql "gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// go-gorm+pgx-stdlib, go-gorm+mysql: GORM over the *sql.DB of a database/sql method this
// worker measures bare (go-pgx-stdlib, go-mysql), opened exactly as that method opens it
// (the same connector, the pool pinned to one connection) and handed to GORM's dialector as
// its Conn, so that the pair of cells differs by GORM's own work: building statements from
// the entity's schema, its callbacks, scanning into entities by reflection.
//
// Each shape goes through GORM's API as its users call it: a select by primary key is
// Take(&entity) with the key as conditions, any other select of equalities Find(&[]entity),
// a select of some of the table's columns with Select(those columns) (the entity's other
// fields left zero; a select of every column loads whole entities, SELECT *),
// an insert Create(&entity), an update by key loads the entity (Take) then Model(&entity).
// Updates the columns set, any other update or a delete Table(t).Where(…).Updates/Delete, a
// batch CreateInBatches inside Transaction. A richer shape (ranges, OR, IN, LIKE, ordering,
// pages, joins, aggregates, increments) is GORM's chain with the condition fragments its users
// write (Where("id > ?", x).Or(…), Order("id desc"), Limit, Offset, Joins("LEFT JOIN …"),
// Select(…).Group(…), gorm.Expr("qty + ?", x)), built from the shape (gorm_query.go); a load
// step goes through associations (Preload, Association). Only a statement of no shape (or of a
// table the suite does not declare) is Raw(…).Rows() or Exec(…), and its answers say "api":
// "raw". Every chain starts from the root *gorm.DB, a new Statement: GORM keeps no identity
// map, so no read is answered from a cache.

// layerUnder is the bare method under a layer: its identity (hello) and its database/sql
// configuration.
type layerUnder interface {
	dbDriver
	sqlMethod
}

type gormDriver struct {
	sqlDriver
	under     layerUnder
	base      string // the bare method's name
	dialector func(db *sql.DB) gorm.Dialector
	dbmsName  string

	g, gp *gorm.DB // over d.db: plain (extended), its PrepareStmt session (prepared)
	gFor  *sql.DB  // the *sql.DB they are over
	gtx   *gorm.DB // the open transaction (commit_every)

	// per step
	ent     *entity
	rd      *reader
	cols    []string         // a select of some of the entity's columns: Select(…)'s; nil: whole entities
	conds   []map[string]any // per operation: the where's columns and values
	sets    []map[string]any // per operation: an update's columns and values
	rows    reflect.Value    // insert: the entities to create, one per operation
	groups  []any            // batch: a pointer to each group's slice of entities
	raw     bool             // the statement goes by Raw/Exec
	rawArgs [][]any
	q       *gormQuery // a shape richer than the plain form: its chain (gorm_query.go)
	res     *result    // a select of a join, an aggregate or a group: its row type (Scan)
	ld      *gormLoad  // a load step: the entities and their associations

	// statements counted by GORM callbacks, registered for verification passes only
	counting bool
	counted  int64
}

func newGormPgxDriver() dbDriver {
	d := &gormDriver{under: &pgxStdlibDriver{}, base: "go-pgx-stdlib", dbmsName: "postgresql",
		dialector: func(db *sql.DB) gorm.Dialector { return postgres.New(postgres.Config{Conn: db}) }}
	d.m = d.under
	return d
}

func newGormMysqlDriver() dbDriver {
	d := &gormDriver{under: &mysqlDriver{}, base: "go-mysql", dbmsName: "mariadb",
		dialector: func(db *sql.DB) gorm.Dialector { return gormmysql.New(gormmysql.Config{Conn: db}) }}
	d.m = d.under
	return d
}

func (d *gormDriver) driverName() string {
	return "gorm.io/gorm over " + d.under.driverName()
}

func (d *gormDriver) driverVersion() string {
	dialect := "gorm.io/driver/postgres"
	if d.dbmsName == "mariadb" {
		dialect = "gorm.io/driver/mysql"
	}
	return fmt.Sprintf("%s (%s %s, %s %s)", moduleVersion("gorm.io/gorm"), dialect, moduleVersion(dialect),
		d.under.driverName(), d.under.driverVersion())
}

func (d *gormDriver) dbms() []string  { return d.under.dbms() }
func (d *gormDriver) modes() []string { return []string{"extended", "prepared"} }

func (d *gormDriver) batchStyle() string {
	return "per group db.Transaction(func(tx) { tx.Table(t).CreateInBatches(&entities, B) }): BEGIN, one multi-row INSERT … VALUES (…), (…) of the group's entities, COMMIT"
}

func (d *gormDriver) settings() map[string]string {
	boolean := "sql.NullBool"
	driverSettings := "go-pgx-stdlib's, unchanged: stdlib.GetConnector of its pgx ConnConfig (DefaultQueryExecMode = QueryExecModeExec, StatementCacheCapacity = 0, DescriptionCacheCapacity = 0, search_path in the startup packet, OptionShouldPing false), sql.OpenDB, the pool pinned to one connection; handed to postgres.New(postgres.Config{Conn: db}) (the dialector's own DSN path, with PreferSimpleProtocol, is not used, so the driver is configured exactly as the bare method)"
	extended := "PrepareStmt false: DB.QueryContext/ExecContext(sql, args...) under pgx's QueryExecModeExec, as go-pgx-stdlib's extended: the unnamed statement, Parse/Bind/Describe/Execute/Sync in one round trip, parameters as text of unspecified type, text results"
	prepared := "db.Session(&gorm.Session{PrepareStmt: true}) (the same as gorm.Config{PrepareStmt: true}), GORM's own switch for prepared statements: its PreparedStmtDB prepares each SQL text it builds once (DB.PrepareContext: a named pgx statement, inside the first operation that runs it) and caches the *sql.Stmt (an LRU of GORM's defaults); inside a transaction GORM prepares on the Tx (database/sql re-prepares such a statement in each new transaction). The cached statements are closed after the step (untimed)"
	scan := "Find(&[]entity) without arguments: DB.QueryContext(sql) under QueryExecModeExec, Parse/Bind/Describe/Execute/Sync of the unnamed statement with text results (go-pgx-stdlib's scan passes pgx.QueryExecModeSimpleProtocol, which GORM's query builder has no way to pass); a statement of no plain shape goes the same way through Raw"
	if d.dbmsName == "mariadb" {
		boolean = "sql.NullInt64 (BOOLEAN is TINYINT(1), an integer to the driver)"
		driverSettings = "go-mysql's, unchanged: mysql.NewConnector of its Config (interpolateParams=false, parseTime=true, loc=UTC, clientFoundRows=true, collation=utf8mb4_bin, checkConnLiveness=false, maxAllowedPacket=64 MiB), sql.OpenDB, the pool pinned to one connection; handed to gormmysql.New(gormmysql.Config{Conn: db}), which runs SELECT VERSION() at every gorm.Open (the MariaDB dialect's feature check; SkipInitializeWithVersion false, GORM's default)"
		extended = "PrepareStmt false: DB.QueryContext/ExecContext(sql, args...): interpolateParams is off, so database/sql prepares, executes and closes every statement (COM_STMT_PREPARE, COM_STMT_EXECUTE, COM_STMT_CLOSE), as go-mysql's extended"
		prepared = "db.Session(&gorm.Session{PrepareStmt: true}) (the same as gorm.Config{PrepareStmt: true}), GORM's own switch for prepared statements: its PreparedStmtDB prepares each SQL text it builds once (COM_STMT_PREPARE, inside the first operation that runs it) and caches the *sql.Stmt (COM_STMT_EXECUTE after that); inside a transaction GORM prepares on the Tx (database/sql re-prepares such a statement in each new transaction). The cached statements are closed after the step (untimed)"
		scan = "Find(&[]entity) without arguments: DB.QueryContext(sql), a COM_QUERY (text protocol), as go-mysql's scan; a statement of no plain shape goes the same way through Raw"
	}
	under := d.under.settings()
	settings := map[string]string{
		"tls":          d.base + "'s, through the *sql.DB it opens (the layer has no TLS setting of its own): " + under["tls"],
		"layer":        "gorm.io/gorm " + moduleVersion("gorm.io/gorm") + " over " + d.base,
		"driver":       driverSettings,
		"gorm.Config":  "SkipDefaultTransaction true (GORM otherwise wraps every Create/Update/Delete in BEGIN … COMMIT, two round trips the bare driver does not make; GORM's documentation advises turning it off for speed, and writes grouped by commit_every or a batch are in a transaction of their own); Logger logger.Discard (nothing logged, no slow-query timer); PrepareStmt as the mode says; QueryFields false (SELECT * for whole entities, a select of some columns by Select); TranslateError false; CreateBatchSize 0 (CreateInBatches gives the size); NamingStrategy unused (every statement names its table with Table(t), a load's associations by the table set on their schemas, and every field its column by tag)",
		"entities":     fmt.Sprintf(layerEntities, d.base[3:], boolean),
		"session":      "every operation starts a new chain from the root *gorm.DB (a new Statement): GORM has no identity map or result cache, so every read goes to the server",
		"reads":        "select whose where is the table's primary key: Table(t).Where(map{key: value}).Take(&entity) (… LIMIT $n, the 1 bound); another select of ANDed equalities: Table(t).Where(map{column: value, …}).Find(&[]entity) (a scan: Find without Where); a richer select of one table's columns: Table(t).Where(\"id > ?\", x).Or(…).Order(\"id desc\").Limit(n).Offset(m).Find(&[]entity) (see shapes). A select of some of the table's columns adds Select([]string{\"id\", \"name\"}) to the chain, the step's columns (each once, quoted as the DBMS quotes names, which GORM writes as given), so that GORM sends SELECT \"id\",\"name\" FROM … and fills those fields of the entities, the others left zero (GORM adds no column, not even the key); SELECT * or a select of every column reads whole entities (SELECT *). Each value is read from the entity's field. A join, an aggregate or a GROUP BY: Table(t).Select(\"t.a, u.b, count(*) AS count …\").Joins(\"LEFT JOIN u ON …\").Where(…).Group(…).Order(…).Scan(&[]row), row a struct type made (reflect.StructOf) from the shape's items, one field per result column typed as the bare driver decodes it (an aggregate as the DBMS types it: count bigint, sum of integers bigint on PostgreSQL and DECIMAL on MariaDB, avg numeric …), Select naming with AS each column Scan maps to a field by name (an aggregate, a second id)",
		"writes":       "insert: Table(t).Create(&entity) (no RETURNING: the key is given, autoIncrement off); update by primary key: Take(&entity) then Table(t).Model(&entity).Updates(map{column: value}) (a SELECT then an UPDATE of the columns set, WHERE the loaded key: load-modify-save as GORM users do, without Save's rewrite of every column); any other update of equalities: Table(t).Where(map{…}).Updates(map{…}); delete: Table(t).Where(map{…}).Delete(&entity); a richer update or delete: Table(t).Where(fragments…).Update(\"c\", value) / Updates(map{…}), an increment as gorm.Expr(\"c + ?\", x), or .Delete(&entity); without a WHERE under Session(AllowGlobalUpdate: true), GORM's switch for it",
		"values":       "conditions and updated columns bound as the bare driver binds them (" + d.base + "'s parameters); a created entity's fields are set from the generated values through their sql.Scanner and bound as those sql.Null* (driver.Valuer) values",
		"statements":   "a statement of no shape (or of a table the suite does not declare, or an aggregate of no known result type): Raw(sql, args...).Rows(), each row scanned into the sql.Null* destinations " + d.base + " uses (GORM's own scan into maps would read numeric as float64, losing digits), or Exec(sql, args...); its answers carry \"api\": \"raw\"",
		"shapes":       "every feature but load-joined through GORM's chain (gorm_query.go), its fragments written once per step from the shape as GORM users write them, names quoted as the DBMS quotes them, every value bound: select of some columns: Select([]string{\"id\", \"name\"}) (whole entities for every column); compare/between/like: Where(\"c > ?\", x), Where(\"c BETWEEN ? AND ?\", a, b), Where(\"c LIKE ?\", p); in: Where(\"c IN ?\", []any{…}) (GORM expands the slice); null: Where(\"c IS NULL\"); or: a group condition, Where(db.Where(a).Or(b)); a literal of the statement bound as a value; order: Order(\"c desc\") per column; limit/offset: Limit(n), Offset(m) (GORM binds them); group: Group(\"c\") per column; aggregate: Select(\"count(*) AS count, max(c) AS max\"); join/left-join: Joins(\"JOIN u ON u.k = t.f\") / Joins(\"LEFT JOIN …\"), the fragment written from the shape's join over the declared reference (GORM's Joins takes a fragment, or an association name for belongs-to and has-one); increment: gorm.Expr(\"c + ?\", x). The step's SQL text is never used but for Raw",
		"load":         "associations: entities made with reflect.StructOf carry a has-many field per level (Posts []Post `gorm:\"foreignKey:user_id;references:id\"`), their schemas given their tables' names (a StructOf type has no name for the NamingStrategy and no TableName method); lazy: GORM has no lazy loading, so the N+1 a GORM user writes: Find(&users), then per parent db.Model(&user).Association(\"Posts\").Find(&user.Posts), per post db.Model(&post).Association(\"Comments\").Find(&post.Comments); selectin: Preload(\"Posts.Comments\").Find(&users) (a query per level, WHERE user_id IN (…) of the keys read); joined: unsupported (" + gormNoJoined + ")",
		"counting":     "statements of verification passes: a callback registered after each of GORM's gorm:create, gorm:query (preloads' queries included), gorm:update, gorm:delete, gorm:row (Rows, Scan) and gorm:raw (Exec) when the pass begins and removed when it ends, so the timed loop runs without it; it counts the statements GORM builds and runs (not BEGIN/COMMIT, so batch and commit_every steps answer none)",
		"transactions": "commit_every: db.Begin() / tx.Commit() (BEGIN/COMMIT), the operations on the transaction's *gorm.DB",
		"extended":     extended,
		"prepared":     prepared,
		"scan":         scan,
		"literal":      "unsupported: GORM binds every value (its ToSQL/Explain inlining is for logging, not for running statements)",
		"connect step": "per operation: sql.OpenDB of the connector (pinned to one connection), gorm.Open(dialector{Conn: db}) whose automatic Ping connects, then sqlDB.Close()",
		"pooled":       sqlPooled + "; each client has its own *gorm.DB over the shared *sql.DB, opened before the barrier",
		"per-request":  "per operation, inside its time: sql.OpenDB of a connector made once before the barrier, gorm.Open over it (DisableAutomaticPing: the statement connects), the operation, DB.Close",
		"verification": layerVerify,
	}
	settings["read_only"] = d.base + "'s, through the *sql.DB it opens: " + under["read_only"]
	if c, ok := under["compress"]; ok {
		settings["compress"] = d.base + "'s: " + c
	}
	return settings
}

// gormConfig: GORM's configuration, every setting that changes behaviour pinned.
func gormConfig(ping bool) *gorm.Config {
	return &gorm.Config{
		SkipDefaultTransaction: true,
		PrepareStmt:            false, // the prepared mode's session turns it on
		Logger:                 logger.Discard,
		DisableAutomaticPing:   !ping,
		QueryFields:            false,
		TranslateError:         false,
		CreateBatchSize:        0,
	}
}

// wrap opens GORM over d.db, and its PrepareStmt session for the prepared mode; ping: GORM's
// automatic Ping, which connects.
func (d *gormDriver) wrap(ping bool) error {
	g, err := gorm.Open(d.dialector(d.db), gormConfig(ping))
	if err != nil {
		return err
	}
	d.g, d.gp, d.gFor = g, g.Session(&gorm.Session{PrepareStmt: true}), d.db
	if d.counting {
		d.countOn(g)
	}
	if d.ld != nil {
		return d.ld.name(g)
	}
	return nil
}

// countName is the callback that counts statements in verification passes.
const countName = "accessbench:count"

// countOn registers the counting callback after each of GORM's statement-running callbacks
// (create, query — preloads run their queries through it too —, update, delete, row: Rows
// and Scan, raw: Exec), on the *gorm.DB's callbacks, which its sessions share; countOff
// removes it, so the timed loop runs without it.
func (d *gormDriver) countOn(g *gorm.DB) {
	count := func(db *gorm.DB) {
		if !db.DryRun && db.Statement.SQL.Len() > 0 {
			d.counted++
		}
	}
	cb := g.Callback()
	errs := []error{
		cb.Create().After("gorm:create").Register(countName, count),
		cb.Query().After("gorm:query").Register(countName, count),
		cb.Update().After("gorm:update").Register(countName, count),
		cb.Delete().After("gorm:delete").Register(countName, count),
		cb.Row().After("gorm:row").Register(countName, count),
		cb.Raw().After("gorm:raw").Register(countName, count),
	}
	for _, err := range errs {
		if err != nil {
			fmt.Fprintln(os.Stderr, "abworker-go: registering GORM's counting callback:", err)
		}
	}
}

func (d *gormDriver) countOff(g *gorm.DB) {
	cb := g.Callback()
	cb.Create().Remove(countName)
	cb.Query().Remove(countName)
	cb.Update().Remove(countName)
	cb.Delete().Remove(countName)
	cb.Row().Remove(countName)
	cb.Raw().Remove(countName)
}

func (d *gormDriver) open(ep endpoint) error {
	db, err := d.m.openDB(ep)
	if err != nil {
		return err
	}
	d.db, d.ep = db, ep
	if err := d.wrap(true); err != nil {
		db.Close()
		d.db = nil
		return err
	}
	return nil
}

// dbFor: the *gorm.DB an operation of the step runs on: the open transaction, else the
// prepared-statement one in prepared mode.
func (d *gormDriver) dbFor(st *step) *gorm.DB {
	if d.gtx != nil {
		return d.gtx
	}
	if st.kind == kExec && st.mode == mPrepared {
		return d.gp
	}
	return d.g
}

func (d *gormDriver) begin(st *step) error {
	d.ent, d.rd, d.cols, d.conds, d.sets, d.groups, d.rawArgs, d.raw = nil, nil, nil, nil, nil, nil, nil, false
	d.q, d.res, d.ld = nil, nil, nil
	d.rows = reflect.Value{}
	if st.kind == kExec && st.mode == mLiteral {
		return unsupported("GORM binds every value (its ToSQL/Explain inlining is for logging, not for running statements)")
	}
	if err := d.sqlDriver.begin(st); err != nil {
		return err
	}
	if st.verify && !d.counting { // GORM's callbacks count this pass's statements
		d.counting, d.counted = true, 0
		if d.g != nil {
			d.countOn(d.g)
		}
	}
	if st.kind == kConnect {
		return nil
	}
	if st.kind == kLoad {
		return d.beginLoad(st)
	}
	sh := st.shape
	if !sh.mapped() {
		if st.kind == kBatch {
			return unsupported("a GORM batch is CreateInBatches of entities, and this statement is not an insert into a table of the suite")
		}
		d.raw, d.rawArgs = true, d.args
		return nil
	}
	if st.kind == kBatch && sh.kind != "insert" {
		return unsupported("a GORM batch is CreateInBatches of entities, and this statement is not an insert")
	}
	ent, err := entityFor(sh, d.dbmsName)
	if err != nil {
		return unsupported("%v", err)
	}
	d.ent = ent
	if !sh.plain || !sh.distinctWhere() { // GORM's chain of fragments (gorm_query.go)
		return d.beginRich(st)
	}
	ncols := len(sh.columns)
	switch sh.kind {
	case "select":
		if d.rd, err = ent.reader(sh.columns); err != nil {
			return unsupported("%v", err)
		}
		st.ncols = ncols
		d.cols = gormSelect(sh, d.dbmsName)
		d.conds = d.conditions(sh.where, 0)
	case "insert":
		n := len(st.params)
		d.rows = reflect.MakeSlice(reflect.SliceOf(ent.typ), n, n)
		for i, p := range st.params {
			if err := ent.fill(d.rows.Index(i), sh.columns, p); err != nil {
				return unsupported("%v", err)
			}
		}
		if st.kind == kBatch {
			for g := 0; g < st.nops; g++ {
				first, last := st.group(g)
				ptr := reflect.New(reflect.SliceOf(ent.typ))
				ptr.Elem().Set(d.rows.Slice(first, last))
				d.groups = append(d.groups, ptr.Interface())
			}
		}
	case "update":
		d.sets = make([]map[string]any, len(d.args))
		for i, args := range d.args {
			m := make(map[string]any, ncols)
			for k, c := range sh.columns {
				m[c] = args[k]
			}
			d.sets[i] = m
		}
		d.conds = d.conditions(sh.where, ncols)
	case "delete":
		d.conds = d.conditions(sh.where, 0)
	default:
		d.raw, d.rawArgs = true, d.args
	}
	return nil
}

// beginRich readies a shape richer than the plain form: the chain's fragments, written once
// (as a GORM user writes them in the code), and for a join, an aggregate or a group the row
// type Scan fills. A shape whose result cannot be typed (an aggregate of no known type) goes
// by Raw, and says so.
func (d *gormDriver) beginRich(st *step) error {
	sh := st.shape
	var err error
	if sh.kind == "select" && !sh.entityRead() {
		if d.res, err = resultFor(sh, d.dbmsName); err != nil {
			fmt.Fprintf(os.Stderr, "abworker-go: %v: through GORM's Raw\n", err)
			d.raw, d.rawArgs = true, d.args
			return nil
		}
		d.rd, _ = d.res.reader(d.res.fields)
		st.ncols = len(sh.items)
	} else if sh.kind == "select" {
		if d.rd, err = d.ent.reader(sh.columns); err != nil {
			return unsupported("%v", err)
		}
		st.ncols = len(sh.columns)
		d.cols = gormSelect(sh, d.dbmsName)
	}
	if d.q, err = gormQueryOf(sh, d.res, d.cols, d.dbmsName); err != nil {
		return unsupported("%v", err)
	}
	return nil
}

// conditions: per operation, the where's columns and their values (the arguments from
// offset on), before the clock; nil when the statement has no where.
func (d *gormDriver) conditions(where []string, offset int) []map[string]any {
	if len(where) == 0 {
		return nil
	}
	out := make([]map[string]any, len(d.args))
	for i, args := range d.args {
		m := make(map[string]any, len(where))
		for k, c := range where {
			m[c] = args[offset+k]
		}
		out[i] = m
	}
	return out
}

// op is one operation; in a verification pass, the statements GORM's callbacks saw are
// counted (not for batches and commit_every groups, whose BEGIN and COMMIT no callback sees).
func (d *gormDriver) op(st *step, i int, sk *sink) (int64, error) {
	if sk == nil || !d.counting || st.kind == kConnect {
		return d.run(st, i, sk)
	}
	d.counted = 0
	n, err := d.run(st, i, sk)
	if st.kind != kBatch && st.commitEvery == 0 {
		sk.sent(d.counted)
	}
	return n, err
}

func (d *gormDriver) run(st *step, i int, sk *sink) (int64, error) {
	switch st.kind {
	case kConnect:
		db, err := d.m.openDB(d.ep)
		if err != nil {
			return 0, err
		}
		_, err = gorm.Open(d.dialector(db), gormConfig(true)) // its Ping connects
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		return 0, err
	case kBatch:
		first, last := st.group(i)
		table, group := st.shape.table, d.groups[i]
		err := d.g.Transaction(func(tx *gorm.DB) error {
			return tx.Table(table).CreateInBatches(group, last-first).Error
		})
		if err != nil {
			return 0, err
		}
		return int64(last - first), nil
	}
	g := d.dbFor(st)
	switch {
	case st.kind == kLoad:
		return d.load(g, d.args[i], sk)
	case d.q != nil:
		return d.runRich(st, g, i, sk)
	}
	if d.raw {
		var args []any
		if st.kind == kExec {
			args = d.rawArgs[i]
		}
		if st.fetch {
			rows, err := g.Raw(st.sql, args...).Rows()
			return d.read(st, rows, err, sk)
		}
		res := g.Exec(st.sql, args...)
		return res.RowsAffected, res.Error
	}
	sh := st.shape
	var cond map[string]any
	if d.conds != nil {
		cond = d.conds[i]
	}
	switch sh.kind {
	case "select":
		if st.kind == kExec && sh.byKey() {
			row, found, err := d.take(g, sh, d.cols, cond)
			if !found || err != nil {
				return 0, err
			}
			if sk != nil {
				d.rd.add(sk, row.Elem())
			}
			return 1, nil
		}
		rows := reflect.New(reflect.SliceOf(d.ent.typ))
		q := g.Table(sh.table)
		if d.cols != nil {
			q = q.Select(d.cols)
		}
		if cond != nil {
			q = q.Where(cond)
		}
		if err := q.Find(rows.Interface()).Error; err != nil {
			return 0, err
		}
		if sk != nil {
			d.rd.addAll(sk, rows.Elem())
		}
		return int64(rows.Elem().Len()), nil
	case "insert":
		res := g.Table(sh.table).Create(d.rows.Index(i).Addr().Interface())
		return res.RowsAffected, res.Error
	case "update":
		if sh.byKey() { // load, then update the loaded entity's columns (load-modify-save)
			row, found, err := d.take(g, sh, nil, cond)
			if !found || err != nil {
				return 0, err
			}
			res := g.Table(sh.table).Model(row.Interface()).Updates(d.sets[i])
			return res.RowsAffected, res.Error
		}
		q := g.Table(sh.table)
		if cond != nil {
			q = q.Where(cond)
		} else {
			q = q.Session(&gorm.Session{AllowGlobalUpdate: true})
		}
		res := q.Updates(d.sets[i])
		return res.RowsAffected, res.Error
	case "delete":
		q := g.Table(sh.table)
		if cond != nil {
			q = q.Where(cond)
		} else {
			q = q.Session(&gorm.Session{AllowGlobalUpdate: true})
		}
		res := q.Delete(reflect.New(d.ent.typ).Interface())
		return res.RowsAffected, res.Error
	}
	return 0, fail("internal", "unknown shape kind %q", sh.kind)
}

func (d *gormDriver) txBegin(st *step) error {
	tx := d.dbFor(st).Begin()
	if tx.Error != nil {
		return tx.Error
	}
	d.gtx = tx
	return nil
}

func (d *gormDriver) txCommit(st *step) error {
	err := d.gtx.Commit().Error
	d.gtx = nil
	return err
}

func (d *gormDriver) recover(st *step) {
	if d.gtx != nil {
		if err := d.gtx.Rollback().Error; err != nil {
			fmt.Fprintln(os.Stderr, "abworker-go: rollback:", err)
		}
		d.gtx = nil
	}
	d.sqlDriver.recover(st)
}

// end closes the statements GORM prepared in the step (synchronously: evicting them from its
// cache would close them in a goroutine of its own, which could reach the connection inside
// the next step's time).
func (d *gormDriver) end(st *step) {
	if d.gp != nil {
		if p, ok := d.gp.ConnPool.(*gorm.PreparedStmtDB); ok {
			p.Mux.Lock()
			for _, key := range p.Stmts.Keys() {
				if s, ok := p.Stmts.Get(key); ok {
					if err := s.Close(); err != nil {
						fmt.Fprintln(os.Stderr, "abworker-go: closing a prepared statement:", err)
					}
				}
				p.Stmts.Delete(key)
			}
			p.Mux.Unlock()
		}
	}
	if d.counting {
		if d.g != nil {
			d.countOff(d.g)
		}
		d.counting = false
	}
	d.sqlDriver.end(st)
	d.ent, d.rd, d.cols, d.conds, d.sets, d.groups, d.rawArgs = nil, nil, nil, nil, nil, nil, nil
	d.q, d.res, d.ld = nil, nil, nil
	d.rows = reflect.Value{}
}

// api: "raw" when the step's statement went by Raw/Exec (PROTOCOL.md: no shape, or a table
// the suite does not declare).
func (d *gormDriver) api() string {
	if d.raw {
		return "raw"
	}
	return ""
}

// ---- steps under load ----------------------------------------------------------------------

// connect (per request, inside the operation's time): a new *sql.DB, and GORM opened over
// it; its first statement connects.
func (d *gormDriver) connect() error {
	if err := d.sqlDriver.connect(); err != nil {
		return err
	}
	return d.wrap(false)
}

func (d *gormDriver) disconnect() {
	d.gtx = nil
	d.sqlDriver.disconnect()
	d.g, d.gp, d.gFor = nil, nil, nil
}

// attach (pooled, before the barrier): the client's own *gorm.DB over the shared pool.
func (d *gormDriver) attach(p connPool) {
	d.sqlDriver.attach(p)
	if err := d.wrap(false); err != nil {
		fmt.Fprintln(os.Stderr, "abworker-go: gorm.Open over the pool:", err)
	}
}

func (d *gormDriver) classify(err error) *failure { return d.under.classify(err) }

// take loads the one entity whose key the condition gives (GORM's Take: … LIMIT 1), only the
// columns cols names when it names any (Select(cols)); found is false, without an error, when
// there is none.
func (d *gormDriver) take(g *gorm.DB, sh *shape, cols []string, cond map[string]any) (reflect.Value, bool, error) {
	row := reflect.New(d.ent.typ)
	q := g.Table(sh.table)
	if cols != nil {
		q = q.Select(cols)
	}
	err := q.Where(cond).Take(row.Interface()).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return row, false, nil
	}
	return row, err == nil, err
}

// gormSelect: for a select of some of the table's columns, those columns, each once and quoted
// as the DBMS quotes names, for Select([]string{…}) (GORM writes a name it is given quoted as
// it is); nil for SELECT * or a select of every column, which loads whole entities.
func gormSelect(sh *shape, dbms string) []string {
	if sh.star {
		return nil
	}
	seen := make(map[string]bool, len(sh.columns))
	var cols []string
	for _, c := range sh.columns {
		if !seen[c] {
			seen[c] = true
			cols = append(cols, quoteName(c, dbms))
		}
	}
	if len(cols) == len(sh.tableColumns) {
		return nil
	}
	return cols
}

// shapes: GORM maps every shape feature through its chain and associations but a has-many
// association loaded by JOIN.
func (d *gormDriver) shapes() object {
	return shapesExcept(map[string]string{"load-joined": gormNoJoined})
}
