module.exports = { ...require("./strings") };
