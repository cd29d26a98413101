BEGIN TRANSACTION;
CREATE TABLE artifacts (case_key TEXT PRIMARY KEY, data TEXT NOT NULL);
INSERT INTO "artifacts" VALUES('1932ee6f37856e24c915','{"trace":{"k":1}}');
INSERT INTO "artifacts" VALUES('220f7a61e7e085f28aad','{"trace":{"k":2}}');
INSERT INTO "artifacts" VALUES('dde7dcb5d7f7332f035e','{"trace":{"k":1}}');
INSERT INTO "artifacts" VALUES('0d1914ec2160cdc8f3cc','{"trace":{"k":2}}');
CREATE TABLE cases (
    key TEXT PRIMARY KEY,
    identity TEXT NOT NULL,
    technique TEXT NOT NULL, technique_version TEXT,
    variant TEXT, fidelity TEXT,
    profile TEXT, profile_hash TEXT, workload TEXT, workload_hash TEXT,
    params TEXT, overrides TEXT, seed INTEGER,
    status TEXT NOT NULL, error TEXT, traceback TEXT, duration REAL,
    run_id INTEGER REFERENCES runs(id), created TEXT NOT NULL, result_id INTEGER
);
INSERT INTO "cases" VALUES('1932ee6f37856e24c915','{"code":"1f6122e317740bc2","env":"4b0f58d8d27cd737","inputs":{}}','oldstore','0.1.0','base','model',NULL,NULL,NULL,NULL,'{"k":1}','{}',0,'ok',NULL,NULL,2.42460009758360683917e-05,3,'2026-12-03T16:46:02.813+00:00',17);
INSERT INTO "cases" VALUES('220f7a61e7e085f28aad','{"code":"1f6122e317740bc2","env":"4b0f58d8d27cd737","inputs":{}}','oldstore','0.1.0','base','model',NULL,NULL,NULL,NULL,'{"k":2}','{}',0,'ok',NULL,NULL,2.40560002566780894994e-05,3,'2026-12-03T16:46:02.814+00:00',18);
INSERT INTO "cases" VALUES('38a74c8f096e1fa89f84','{"code":"1f6122e317740bc2","env":"4b0f58d8d27cd737","inputs":{}}','oldstore','0.1.0','base','model',NULL,NULL,NULL,NULL,'{"k":3}','{}',0,'failed','RuntimeError: boom','Traceback (most recent call last):
  File "suite-0.3.2/suite/runner/evaluate.py", line 221, in _evaluate
    res = tech.evaluate(scenario)
          ^^^^^^^^^^^^^^^^^^^^^^^
  File "suite-0.3.2/suite/technique.py", line 361, in evaluate
    result = fn(scenario)
             ^^^^^^^^^^^^
  File "make_store.py", line 14, in _ev
    if k == 3: raise RuntimeError("boom")
               ^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: boom
',2.44691430016246158629e-02,2,'2026-12-03T16:46:02.811+00:00',11);
INSERT INTO "cases" VALUES('52aae7be3a8adfcc34d7','{"code":"1f6122e317740bc2","env":"4b0f58d8d27cd737","inputs":{}}','oldstore','0.1.0','base','model',NULL,NULL,NULL,NULL,'{"k":4}','{}',0,'skipped','not this one',NULL,4.31349981226958334445e-05,2,'2026-12-03T16:46:02.811+00:00',12);
INSERT INTO "cases" VALUES('c0007600ddeb1039924c','{"code":"1f6122e317740bc2","env":"4b0f58d8d27cd737","inputs":{}}','oldstore','0.1.0','base','model',NULL,NULL,NULL,NULL,'{"k":5}','{}',0,'failed','BadMetric: oldstore: metric ''bad'' is -2 s: expected >= 0 for a quantity in s','Traceback (most recent call last):
  File "suite-0.3.2/suite/runner/evaluate.py", line 225, in _evaluate
    out["metrics"], samples, out["artifacts"] = _result_fields(tech, res, artifacts)
                                                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "suite-0.3.2/suite/runner/evaluate.py", line 182, in _result_fields
    raise BadMetric(f"{tech.name}: {bad}")
suite.runner.checks.BadMetric: oldstore: metric ''bad'' is -2 s: expected >= 0 for a quantity in s
',3.94605998735642060637e-04,2,'2026-12-03T16:46:02.812+00:00',13);
INSERT INTO "cases" VALUES('dde7dcb5d7f7332f035e','{"code":"1f6122e317740bc2","env":"4b0f58d8d27cd737","inputs":{}}','oldstore','0.1.0','fast','model',NULL,NULL,NULL,NULL,'{"k":1}','{}',0,'ok',NULL,NULL,2.26040028792340308427e-05,3,'2026-12-03T16:46:02.814+00:00',19);
INSERT INTO "cases" VALUES('0d1914ec2160cdc8f3cc','{"code":"1f6122e317740bc2","env":"4b0f58d8d27cd737","inputs":{}}','oldstore','0.1.0','fast','model',NULL,NULL,NULL,NULL,'{"k":2}','{}',0,'ok',NULL,NULL,2.28440003411378711462e-05,3,'2026-12-03T16:46:02.814+00:00',20);
INSERT INTO "cases" VALUES('e90d11d183e596b3bc9c','{"code":"1f6122e317740bc2","env":"4b0f58d8d27cd737","inputs":{}}','oldstore','0.1.0','fast','model',NULL,NULL,NULL,NULL,'{"k":3}','{}',0,'failed','RuntimeError: boom','Traceback (most recent call last):
  File "suite-0.3.2/suite/runner/evaluate.py", line 221, in _evaluate
    res = tech.evaluate(scenario)
          ^^^^^^^^^^^^^^^^^^^^^^^
  File "suite-0.3.2/suite/technique.py", line 361, in evaluate
    result = fn(scenario)
             ^^^^^^^^^^^^
  File "make_store.py", line 14, in _ev
    if k == 3: raise RuntimeError("boom")
               ^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: boom
',2.02381001145113259553e-04,2,'2026-12-03T16:46:02.812+00:00',14);
INSERT INTO "cases" VALUES('6b5bec2bb1d184615a0a','{"code":"1f6122e317740bc2","env":"4b0f58d8d27cd737","inputs":{}}','oldstore','0.1.0','fast','model',NULL,NULL,NULL,NULL,'{"k":4}','{}',0,'skipped','not this one',NULL,1.73859989445190876722e-05,2,'2026-12-03T16:46:02.812+00:00',15);
INSERT INTO "cases" VALUES('e52407eb99379b2b0b63','{"code":"1f6122e317740bc2","env":"4b0f58d8d27cd737","inputs":{}}','oldstore','0.1.0','fast','model',NULL,NULL,NULL,NULL,'{"k":5}','{}',0,'failed','BadMetric: oldstore: metric ''bad'' is -2 s: expected >= 0 for a quantity in s','Traceback (most recent call last):
  File "suite-0.3.2/suite/runner/evaluate.py", line 225, in _evaluate
    out["metrics"], samples, out["artifacts"] = _result_fields(tech, res, artifacts)
                                                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "suite-0.3.2/suite/runner/evaluate.py", line 182, in _result_fields
    raise BadMetric(f"{tech.name}: {bad}")
suite.runner.checks.BadMetric: oldstore: metric ''bad'' is -2 s: expected >= 0 for a quantity in s
',2.4693700106581673026e-04,2,'2026-12-03T16:46:02.813+00:00',16);
CREATE TABLE field_sets (id INTEGER PRIMARY KEY, fields TEXT NOT NULL UNIQUE);
CREATE TABLE fields_read (
    technique TEXT NOT NULL, code TEXT NOT NULL, variant TEXT NOT NULL, fidelity TEXT NOT NULL,
    fields TEXT NOT NULL,
    PRIMARY KEY (technique, code, variant, fidelity)
);
CREATE TABLE judgements (key TEXT PRIMARY KEY, data TEXT NOT NULL, created TEXT NOT NULL);
CREATE TABLE results (
    id INTEGER PRIMARY KEY AUTOINCREMENT, case_key TEXT NOT NULL, run_id INTEGER,
    status TEXT NOT NULL, error TEXT, traceback TEXT, duration REAL, created TEXT NOT NULL,
    metrics TEXT, samples TEXT, fields_id INTEGER
);
INSERT INTO "results" VALUES(1,'1932ee6f37856e24c915',1,'ok',NULL,NULL,8.0658999650040641427e-05,'2026-12-03T16:46:02.764+00:00','[["time",0.5,"s","lower"],["gain",-1.5,"1","higher"]]','{"time":[0.1,0.2,1.0]}',NULL);
INSERT INTO "results" VALUES(2,'220f7a61e7e085f28aad',1,'ok',NULL,NULL,3.71149981219787150621e-05,'2026-12-03T16:46:02.765+00:00','[["time",1.0,"s","lower"],["gain",-3.0,"1","higher"]]','{"time":[0.2,0.4,2.0]}',NULL);
INSERT INTO "results" VALUES(3,'38a74c8f096e1fa89f84',1,'failed','RuntimeError: boom','Traceback (most recent call last):
  File "suite-0.3.2/suite/runner/evaluate.py", line 221, in _evaluate
    res = tech.evaluate(scenario)
          ^^^^^^^^^^^^^^^^^^^^^^^
  File "suite-0.3.2/suite/technique.py", line 361, in evaluate
    result = fn(scenario)
             ^^^^^^^^^^^^
  File "make_store.py", line 14, in _ev
    if k == 3: raise RuntimeError("boom")
               ^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: boom
',7.66969998949207365512e-04,'2026-12-03T16:46:02.766+00:00',NULL,NULL,NULL);
INSERT INTO "results" VALUES(4,'52aae7be3a8adfcc34d7',1,'skipped','not this one',NULL,2.75409984169527888298e-05,'2026-12-03T16:46:02.766+00:00',NULL,NULL,NULL);
INSERT INTO "results" VALUES(5,'c0007600ddeb1039924c',1,'failed','BadMetric: oldstore: metric ''bad'' is -2 s: expected >= 0 for a quantity in s','Traceback (most recent call last):
  File "suite-0.3.2/suite/runner/evaluate.py", line 225, in _evaluate
    out["metrics"], samples, out["artifacts"] = _result_fields(tech, res, artifacts)
                                                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "suite-0.3.2/suite/runner/evaluate.py", line 182, in _result_fields
    raise BadMetric(f"{tech.name}: {bad}")
suite.runner.checks.BadMetric: oldstore: metric ''bad'' is -2 s: expected >= 0 for a quantity in s
',1.70206039983895607292e-02,'2026-12-03T16:46:02.784+00:00',NULL,NULL,NULL);
INSERT INTO "results" VALUES(6,'dde7dcb5d7f7332f035e',1,'ok',NULL,NULL,8.34639977256301790475e-05,'2026-12-03T16:46:02.784+00:00','[["time",0.75,"s","lower"],["gain",-1.5,"1","higher"]]','{"time":[0.1,0.2,1.0]}',NULL);
INSERT INTO "results" VALUES(7,'0d1914ec2160cdc8f3cc',1,'ok',NULL,NULL,2.66399983956944197416e-05,'2026-12-03T16:46:02.784+00:00','[["time",1.25,"s","lower"],["gain",-3.0,"1","higher"]]','{"time":[0.2,0.4,2.0]}',NULL);
INSERT INTO "results" VALUES(8,'e90d11d183e596b3bc9c',1,'failed','RuntimeError: boom','Traceback (most recent call last):
  File "suite-0.3.2/suite/runner/evaluate.py", line 221, in _evaluate
    res = tech.evaluate(scenario)
          ^^^^^^^^^^^^^^^^^^^^^^^
  File "suite-0.3.2/suite/technique.py", line 361, in evaluate
    result = fn(scenario)
             ^^^^^^^^^^^^
  File "make_store.py", line 14, in _ev
    if k == 3: raise RuntimeError("boom")
               ^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: boom
',3.49409001501044258475e-04,'2026-12-03T16:46:02.785+00:00',NULL,NULL,NULL);
INSERT INTO "results" VALUES(9,'6b5bec2bb1d184615a0a',1,'skipped','not this one',NULL,2.09610007004812359809e-05,'2026-12-03T16:46:02.785+00:00',NULL,NULL,NULL);
INSERT INTO "results" VALUES(10,'e52407eb99379b2b0b63',1,'failed','BadMetric: oldstore: metric ''bad'' is -2 s: expected >= 0 for a quantity in s','Traceback (most recent call last):
  File "suite-0.3.2/suite/runner/evaluate.py", line 225, in _evaluate
    out["metrics"], samples, out["artifacts"] = _result_fields(tech, res, artifacts)
                                                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "suite-0.3.2/suite/runner/evaluate.py", line 182, in _result_fields
    raise BadMetric(f"{tech.name}: {bad}")
suite.runner.checks.BadMetric: oldstore: metric ''bad'' is -2 s: expected >= 0 for a quantity in s
',2.76400998700410127639e-04,'2026-12-03T16:46:02.785+00:00',NULL,NULL,NULL);
INSERT INTO "results" VALUES(11,'38a74c8f096e1fa89f84',2,'failed','RuntimeError: boom','Traceback (most recent call last):
  File "suite-0.3.2/suite/runner/evaluate.py", line 221, in _evaluate
    res = tech.evaluate(scenario)
          ^^^^^^^^^^^^^^^^^^^^^^^
  File "suite-0.3.2/suite/technique.py", line 361, in evaluate
    result = fn(scenario)
             ^^^^^^^^^^^^
  File "make_store.py", line 14, in _ev
    if k == 3: raise RuntimeError("boom")
               ^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: boom
',2.44691430016246158629e-02,'2026-12-03T16:46:02.811+00:00',NULL,NULL,NULL);
INSERT INTO "results" VALUES(12,'52aae7be3a8adfcc34d7',2,'skipped','not this one',NULL,4.31349981226958334445e-05,'2026-12-03T16:46:02.811+00:00',NULL,NULL,NULL);
INSERT INTO "results" VALUES(13,'c0007600ddeb1039924c',2,'failed','BadMetric: oldstore: metric ''bad'' is -2 s: expected >= 0 for a quantity in s','Traceback (most recent call last):
  File "suite-0.3.2/suite/runner/evaluate.py", line 225, in _evaluate
    out["metrics"], samples, out["artifacts"] = _result_fields(tech, res, artifacts)
                                                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "suite-0.3.2/suite/runner/evaluate.py", line 182, in _result_fields
    raise BadMetric(f"{tech.name}: {bad}")
suite.runner.checks.BadMetric: oldstore: metric ''bad'' is -2 s: expected >= 0 for a quantity in s
',3.94605998735642060637e-04,'2026-12-03T16:46:02.812+00:00',NULL,NULL,NULL);
INSERT INTO "results" VALUES(14,'e90d11d183e596b3bc9c',2,'failed','RuntimeError: boom','Traceback (most recent call last):
  File "suite-0.3.2/suite/runner/evaluate.py", line 221, in _evaluate
    res = tech.evaluate(scenario)
          ^^^^^^^^^^^^^^^^^^^^^^^
  File "suite-0.3.2/suite/technique.py", line 361, in evaluate
    result = fn(scenario)
             ^^^^^^^^^^^^
  File "make_store.py", line 14, in _ev
    if k == 3: raise RuntimeError("boom")
               ^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: boom
',2.02381001145113259553e-04,'2026-12-03T16:46:02.812+00:00',NULL,NULL,NULL);
INSERT INTO "results" VALUES(15,'6b5bec2bb1d184615a0a',2,'skipped','not this one',NULL,1.73859989445190876722e-05,'2026-12-03T16:46:02.812+00:00',NULL,NULL,NULL);
INSERT INTO "results" VALUES(16,'e52407eb99379b2b0b63',2,'failed','BadMetric: oldstore: metric ''bad'' is -2 s: expected >= 0 for a quantity in s','Traceback (most recent call last):
  File "suite-0.3.2/suite/runner/evaluate.py", line 225, in _evaluate
    out["metrics"], samples, out["artifacts"] = _result_fields(tech, res, artifacts)
                                                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "suite-0.3.2/suite/runner/evaluate.py", line 182, in _result_fields
    raise BadMetric(f"{tech.name}: {bad}")
suite.runner.checks.BadMetric: oldstore: metric ''bad'' is -2 s: expected >= 0 for a quantity in s
',2.4693700106581673026e-04,'2026-12-03T16:46:02.813+00:00',NULL,NULL,NULL);
INSERT INTO "results" VALUES(17,'1932ee6f37856e24c915',3,'ok',NULL,NULL,2.42460009758360683917e-05,'2026-12-03T16:46:02.813+00:00','[["time",0.5,"s","lower"],["gain",-1.5,"1","higher"]]','{"time":[0.1,0.2,1.0]}',NULL);
INSERT INTO "results" VALUES(18,'220f7a61e7e085f28aad',3,'ok',NULL,NULL,2.40560002566780894994e-05,'2026-12-03T16:46:02.814+00:00','[["time",1.0,"s","lower"],["gain",-3.0,"1","higher"]]','{"time":[0.2,0.4,2.0]}',NULL);
INSERT INTO "results" VALUES(19,'dde7dcb5d7f7332f035e',3,'ok',NULL,NULL,2.26040028792340308427e-05,'2026-12-03T16:46:02.814+00:00','[["time",0.75,"s","lower"],["gain",-1.5,"1","higher"]]','{"time":[0.1,0.2,1.0]}',NULL);
INSERT INTO "results" VALUES(20,'0d1914ec2160cdc8f3cc',3,'ok',NULL,NULL,2.28440003411378711462e-05,'2026-12-03T16:46:02.814+00:00','[["time",1.25,"s","lower"],["gain",-3.0,"1","higher"]]','{"time":[0.2,0.4,2.0]}',NULL);
CREATE TABLE run_cases (
    run_id INTEGER NOT NULL, case_key TEXT NOT NULL, outcome TEXT NOT NULL,
    result_id INTEGER, overrides TEXT,
    PRIMARY KEY (run_id, case_key)
) WITHOUT ROWID;
INSERT INTO "run_cases" VALUES(1,'0d1914ec2160cdc8f3cc','computed',7,'{}');
INSERT INTO "run_cases" VALUES(1,'1932ee6f37856e24c915','computed',1,'{}');
INSERT INTO "run_cases" VALUES(1,'220f7a61e7e085f28aad','computed',2,'{}');
INSERT INTO "run_cases" VALUES(1,'38a74c8f096e1fa89f84','computed',3,'{}');
INSERT INTO "run_cases" VALUES(1,'52aae7be3a8adfcc34d7','computed',4,'{}');
INSERT INTO "run_cases" VALUES(1,'6b5bec2bb1d184615a0a','computed',9,'{}');
INSERT INTO "run_cases" VALUES(1,'c0007600ddeb1039924c','computed',5,'{}');
INSERT INTO "run_cases" VALUES(1,'dde7dcb5d7f7332f035e','computed',6,'{}');
INSERT INTO "run_cases" VALUES(1,'e52407eb99379b2b0b63','computed',10,'{}');
INSERT INTO "run_cases" VALUES(1,'e90d11d183e596b3bc9c','computed',8,'{}');
INSERT INTO "run_cases" VALUES(2,'0d1914ec2160cdc8f3cc','cached',7,'{}');
INSERT INTO "run_cases" VALUES(2,'1932ee6f37856e24c915','cached',1,'{}');
INSERT INTO "run_cases" VALUES(2,'220f7a61e7e085f28aad','cached',2,'{}');
INSERT INTO "run_cases" VALUES(2,'38a74c8f096e1fa89f84','computed',11,'{}');
INSERT INTO "run_cases" VALUES(2,'52aae7be3a8adfcc34d7','computed',12,'{}');
INSERT INTO "run_cases" VALUES(2,'6b5bec2bb1d184615a0a','computed',15,'{}');
INSERT INTO "run_cases" VALUES(2,'c0007600ddeb1039924c','computed',13,'{}');
INSERT INTO "run_cases" VALUES(2,'dde7dcb5d7f7332f035e','cached',6,'{}');
INSERT INTO "run_cases" VALUES(2,'e52407eb99379b2b0b63','computed',16,'{}');
INSERT INTO "run_cases" VALUES(2,'e90d11d183e596b3bc9c','computed',14,'{}');
INSERT INTO "run_cases" VALUES(3,'0d1914ec2160cdc8f3cc','computed',20,'{}');
INSERT INTO "run_cases" VALUES(3,'1932ee6f37856e24c915','computed',17,'{}');
INSERT INTO "run_cases" VALUES(3,'220f7a61e7e085f28aad','computed',18,'{}');
INSERT INTO "run_cases" VALUES(3,'dde7dcb5d7f7332f035e','computed',19,'{}');
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started TEXT NOT NULL,
    finished TEXT,
    host TEXT, platform TEXT, python TEXT,
    packages TEXT, plugins TEXT, git_commit TEXT, command TEXT,
    status TEXT NOT NULL DEFAULT 'running',
    pid INTEGER,
    total INTEGER DEFAULT 0, computed INTEGER DEFAULT 0, cached INTEGER DEFAULT 0,
    ok INTEGER DEFAULT 0, failed INTEGER DEFAULT 0, skipped INTEGER DEFAULT 0
);
INSERT INTO "runs" VALUES(1,'2026-12-03T16:46:02.759+00:00','2026-12-03T16:46:02.786+00:00','vm','Linux-6.18.44-fc-v1147-x86_64-with-glibc2.36','3.11.7','{"dask":"2026.8.0","distributed":"2026.8.0","dlsys-suite":"0.3.2","numpy":"2.4.6","pandas":"3.1.1","pint":"0.25.3","pluggy":"1.7.0","pydantic":"2.14.4","scipy":"1.17.1"}','{"<in-process>":""}','c322c90e33969f2d69afc11448c64e9413dc152e','suite run first','failed',30276,10,10,0,4,4,2);
INSERT INTO "runs" VALUES(2,'2026-12-03T16:46:02.786+00:00','2026-12-03T16:46:02.813+00:00','vm','Linux-6.18.44-fc-v1147-x86_64-with-glibc2.36','3.11.7','{"dask":"2026.8.0","distributed":"2026.8.0","dlsys-suite":"0.3.2","numpy":"2.4.6","pandas":"3.1.1","pint":"0.25.3","pluggy":"1.7.0","pydantic":"2.14.4","scipy":"1.17.1"}','{"<in-process>":""}','c322c90e33969f2d69afc11448c64e9413dc152e','suite run cached','failed',30276,10,6,4,4,4,2);
INSERT INTO "runs" VALUES(3,'2026-12-03T16:46:02.813+00:00','2026-12-03T16:46:02.830+00:00','vm','Linux-6.18.44-fc-v1147-x86_64-with-glibc2.36','3.11.7','{"dask":"2026.8.0","distributed":"2026.8.0","dlsys-suite":"0.3.2","numpy":"2.4.6","pandas":"3.1.1","pint":"0.25.3","pluggy":"1.7.0","pydantic":"2.14.4","scipy":"1.17.1"}','{"<in-process>":""}','c322c90e33969f2d69afc11448c64e9413dc152e','suite run --rerun','done',30276,4,4,0,4,0,0);
CREATE TABLE samples (
    case_key TEXT NOT NULL, metric TEXT NOT NULL, idx INTEGER NOT NULL, value REAL,
    PRIMARY KEY (case_key, metric, idx)
) WITHOUT ROWID;
INSERT INTO "samples" VALUES('0d1914ec2160cdc8f3cc','time',0,0.2);
INSERT INTO "samples" VALUES('0d1914ec2160cdc8f3cc','time',1,0.4);
INSERT INTO "samples" VALUES('0d1914ec2160cdc8f3cc','time',2,2.0);
INSERT INTO "samples" VALUES('1932ee6f37856e24c915','time',0,0.1);
INSERT INTO "samples" VALUES('1932ee6f37856e24c915','time',1,0.2);
INSERT INTO "samples" VALUES('1932ee6f37856e24c915','time',2,1.0);
INSERT INTO "samples" VALUES('220f7a61e7e085f28aad','time',0,0.2);
INSERT INTO "samples" VALUES('220f7a61e7e085f28aad','time',1,0.4);
INSERT INTO "samples" VALUES('220f7a61e7e085f28aad','time',2,2.0);
INSERT INTO "samples" VALUES('dde7dcb5d7f7332f035e','time',0,0.1);
INSERT INTO "samples" VALUES('dde7dcb5d7f7332f035e','time',1,0.2);
INSERT INTO "samples" VALUES('dde7dcb5d7f7332f035e','time',2,1.0);
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO "schema_version" VALUES(6);
CREATE INDEX cases_technique ON cases(technique, variant);
CREATE INDEX results_case ON results(case_key);
CREATE VIEW metrics AS SELECT c.key AS case_key, json_extract(j.value, '$[0]') AS name, json_extract(j.value, '$[1]') AS value, json_extract(j.value, '$[2]') AS unit, json_extract(j.value, '$[3]') AS direction FROM cases c JOIN results r ON r.id = c.result_id, json_each(r.metrics) j WHERE c.status = 'ok';
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('runs',3);
INSERT INTO "sqlite_sequence" VALUES('results',20);
COMMIT;
