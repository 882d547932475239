"""One module per driver or layer; the method name is the registry key."""

DRIVERS = {
    "py-sqlite3": "accessbench.pyworker.drivers.py_sqlite3",
    "py-psycopg": "accessbench.pyworker.drivers.py_psycopg",
    "py-psycopg2": "accessbench.pyworker.drivers.py_psycopg2",
    "py-asyncpg": "accessbench.pyworker.drivers.py_asyncpg",
    "py-pg8000": "accessbench.pyworker.drivers.py_pg8000",
    "py-pyodbc": "accessbench.pyworker.drivers.py_pyodbc",
    "py-mysqlclient": "accessbench.pyworker.drivers.py_mysqlclient",
    "py-pymysql": "accessbench.pyworker.drivers.py_pymysql",
    "py-mariadb": "accessbench.pyworker.drivers.py_mariadb",
    "py-duckdb": "accessbench.pyworker.drivers.py_duckdb",
    # columnar readers: a whole result as Arrow columns
    "py-adbc": "accessbench.pyworker.drivers.py_adbc",
    "py-connectorx": "accessbench.pyworker.drivers.py_connectorx",
    # not a method: the result as CSV moved raw along the same path, the floor readers are set against
    "wire-floor": "accessbench.pyworker.drivers.wire_floor",
    # layers over the drivers above ("module:Class" where a module holds several)
    "py-sqlalchemy-core+psycopg": "accessbench.pyworker.drivers.py_sqlalchemy:CoreOverPsycopg",
    "py-sqlalchemy-core+sqlite3": "accessbench.pyworker.drivers.py_sqlalchemy:CoreOverSqlite3",
    "py-sqlalchemy-orm+psycopg": "accessbench.pyworker.drivers.py_sqlalchemy:OrmOverPsycopg",
    "py-sqlalchemy-orm+sqlite3": "accessbench.pyworker.drivers.py_sqlalchemy:OrmOverSqlite3",
    "py-sqlalchemy-core+mysqlclient": "accessbench.pyworker.drivers.py_sqlalchemy:CoreOverMysqlclient",
    "py-sqlalchemy-orm+mysqlclient": "accessbench.pyworker.drivers.py_sqlalchemy:OrmOverMysqlclient",
    "py-django+psycopg": "accessbench.pyworker.drivers.py_django",
    "py-polars": "accessbench.pyworker.drivers.py_polars",
}
